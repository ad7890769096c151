"""`read_rows` with `ReadLimits`: every bound is met while streaming, in every format, and
the unbounded read (the trainer's own files) is unchanged. Arrow data is measured as it
decodes, dictionaries expanded, and a parquet file's text is read compactly."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from trainer.data.decoded_size import decoded_bytes, decoded_bytes_per_row
from trainer.data.formats import DataLimitError, read_rows, scan_rows
from trainer.data.parquet_reads import bounded_batches, open_compact, read_footer
from trainer.data.read_limits import ReadLimits, RowBudget, longest_text_in

LIMITS = ReadLimits(max_decoded_bytes=10_000, max_rows=5, max_cell_chars=50, max_seconds=60)


def jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    return path


def test_rows_within_every_bound_read_as_without_limits(tmp_path: Path):
    path = jsonl(tmp_path / "ok.jsonl", [{"prompt": "hi", "answer": str(i)} for i in range(5)])
    assert read_rows(path, LIMITS) == read_rows(path)
    budget = scan_rows(path, LIMITS)
    assert budget.rows == 5 and budget.decoded_bytes == path.stat().st_size


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv", ".parquet"])
def test_the_sixth_row_is_refused_in_every_format(tmp_path: Path, suffix: str):
    rows = [{"prompt": "hi", "answer": str(i)} for i in range(6)]
    path = tmp_path / f"rows{suffix}"
    if suffix == ".jsonl":
        jsonl(path, rows)
    elif suffix == ".json":
        path.write_text(json.dumps(rows))
    elif suffix == ".csv":
        path.write_text("prompt,answer\n" + "".join(f"hi,{i}\n" for i in range(6)))
    else:
        pq.write_table(pa.Table.from_pylist(rows), path)
    with pytest.raises(DataLimitError, match="more than 5 rows") as caught:
        scan_rows(path, LIMITS)
    assert caught.value.bound == "rows"


def test_a_long_string_nested_in_a_chat_is_found(tmp_path: Path):
    chat = [[{"role": "user", "content": "x" * 51}]]
    assert longest_text_in(pa.array(chat)) == 51
    path = jsonl(tmp_path / "chat.jsonl", [{"prompt": chat[0], "answer": "1"}])
    with pytest.raises(DataLimitError, match="row 1: a value of 51 characters"):
        scan_rows(path, LIMITS)


def test_a_text_file_larger_than_the_decoded_bound_is_refused_before_reading(tmp_path: Path):
    path = tmp_path / "big.jsonl"
    path.write_text("x" * 10_001)  # not even JSON: the size alone refuses it
    with pytest.raises(DataLimitError, match="declares 9.8 KiB") as caught:
        scan_rows(path, LIMITS)
    assert caught.value.bound == "decoded_bytes"


def test_reading_past_its_time_is_stopped(tmp_path: Path):
    path = jsonl(tmp_path / "slow.jsonl", [{"prompt": "hi", "answer": "1"}])
    with pytest.raises(DataLimitError, match="longer than -1 s") as caught:
        scan_rows(path, ReadLimits(10_000, 5, 50, max_seconds=-1))
    assert caught.value.bound == "seconds"


def one_value_many_rows(rows: int, chars: int) -> pa.DictionaryArray:
    return pa.DictionaryArray.from_arrays(
        pa.array([0] * rows, type=pa.int32()), pa.array(["x" * chars, "unreferenced" * 99])
    )


def test_a_dictionary_column_is_measured_as_its_rows_decode():
    column = one_value_many_rows(rows=100, chars=1000)
    assert column.nbytes < 3_000  # the dictionary once, and the indices
    assert decoded_bytes(column) == 100 * (1000 + 4)  # each row's value, and its offset
    plain = column.cast(pa.string())
    assert decoded_bytes_per_row(column).equals(decoded_bytes_per_row(plain))
    assert longest_text_in(column) == 1000  # the unreferenced (longer) value is not counted
    nested = pa.StructArray.from_arrays([column], names=["content"])
    chats = pa.ListArray.from_arrays(pa.array(range(0, 101, 10), type=pa.int32()), nested)
    assert decoded_bytes_per_row(chats.slice(2, 3)).to_pylist() == [10 * 1004 + 4] * 3


def test_parquet_text_is_read_compactly_whatever_the_file_declares(tmp_path: Path):
    """Without an arrow schema pyarrow would decode a dictionary page into every row;
    read as a dictionary, the batch holds the one value once."""
    path = tmp_path / "pages.parquet"
    table = pa.table({"prompt": one_value_many_rows(rows=2000, chars=50_000)})
    pq.write_table(table, path, store_schema=False)
    limits = ReadLimits(
        max_decoded_bytes=10**9, max_rows=10**6, max_cell_chars=10**6, max_seconds=60
    )
    budget = RowBudget(limits)
    for batch in bounded_batches(open_compact(path, read_footer(path, limits)), budget):
        assert pa.types.is_dictionary(batch.schema.field("prompt").type)
        assert batch.nbytes < 200_000
    assert budget.decoded_bytes == 2000 * 50_004 and budget.longest_value == 50_000


@pytest.mark.parametrize(
    ("column", "options", "bound", "message"),
    [
        (
            pa.array(["y" * 40] * 3),
            {"use_dictionary": False, "column_encoding": {"c": "DELTA_BYTE_ARRAY"}},
            "encoding",
            "DELTA_BYTE_ARRAY",
        ),
        (pa.array([b"z" * 60] * 3, type=pa.binary(60)), {}, "cell_chars", "a value of 60"),
        # 2,000 zeros in one row: RLE stores them in a few bytes, arrow in 16,000.
        (pa.array([[0] * 2000]), {}, "decoded_bytes", "declares 15.6 KiB"),
    ],
    ids=["delta-byte-array", "wide-fixed-binary", "fixed-width-counted"],
)
def test_the_footer_refuses_what_it_can_know(tmp_path: Path, column, options, bound, message):
    path = tmp_path / "footer.parquet"
    pq.write_table(pa.table({"c": column}), path, **options)
    with pytest.raises(DataLimitError, match=message) as caught:
        scan_rows(path, LIMITS)
    assert caught.value.bound == bound

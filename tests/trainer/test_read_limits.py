"""`read_rows` with `ReadLimits`: every bound is met while streaming, in every format, and
the unbounded read (the trainer's own files) is unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from trainer.data.formats import DataLimitError, read_rows, scan_rows
from trainer.data.read_limits import ReadLimits, longest_text_in

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

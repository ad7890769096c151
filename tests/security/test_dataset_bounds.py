"""A dataset upload is bounded by what it decodes to, not by its size on disk or its
encoding: a small compressed parquet file full of repeated text, a dictionary-encoded
column whose one long value many rows refer to, too many rows, or one enormous value is
refused with a 400 naming the bound, and leaves no version and no import behind. The
worker that imports large uploads reads with the same bounds.

A stored version is read (preview, diff, download, a test-run's rows) only while it is
within the bounds, and a page of its rows is bounded in bytes as well as rows.

The bounds are lowered here so the files stay small; `bench/dataset_bomb.py` sends the
full-size files to a running studio and measures the web process and the worker."""

from __future__ import annotations

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from studio.datasets import imports
from studio.datasets.models import Dataset, DatasetImport, DatasetVersion
from studio.datasets.normalise import IngestedFile, sha256_of
from studio.datasets.versions import store_version
from studio.rewards.sources import dataset_records
from tests.studio.test_datasets_api import make_dataset, mixed_rows


def bomb(
    rows: int, chars: int = 1000, long_last: int | None = None, dictionary: bool = True
) -> bytes:
    """verl-shaped parquet whose prompts repeat one long text: it compresses ~1000x."""
    text = "a" * chars
    contents = [text] * rows
    if long_last is not None:
        contents[-1] = "b" * long_last
    table = pa.table(
        {
            "data_source": ["arith"] * rows,
            "prompt": [[{"role": "user", "content": content}] for content in contents],
            "reward_model": [{"style": "rule", "ground_truth": "1"}] * rows,
        }
    )
    buffer = io.BytesIO()
    pq.write_table(
        table, buffer, compression="zstd", row_group_size=4096, use_dictionary=dictionary
    )
    return buffer.getvalue()


def dictionary_bomb(rows: int, chars: int, arrow_dictionary: bool = True) -> bytes:
    """prompt/answer parquet whose prompts are one `chars`-long text that every row refers
    to: dictionary-encoded, it is stored (and declared in the footer) once. With
    `arrow_dictionary` pyarrow reads it back as a dictionary column; without (no arrow
    schema in the file, as other writers make it) it decodes the pages to plain text."""
    prompt = pa.DictionaryArray.from_arrays(
        pa.array([0] * rows, type=pa.int32()), pa.array(["a" * chars])
    )
    table = pa.table({"prompt": prompt, "answer": pa.array(["1"] * rows)})
    buffer = io.BytesIO()
    pq.write_table(  # no statistics: they would hold the long value twice more
        table, buffer, compression="zstd", store_schema=arrow_dictionary, write_statistics=False
    )
    return buffer.getvalue()


@pytest.fixture
def bounded(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.RLSTUDIO_IMPORT_MAX_DECODED_BYTES = 2 * 1024**2
    settings.RLSTUDIO_IMPORT_MAX_ROWS = 1000
    settings.RLSTUDIO_IMPORT_MAX_CELL_CHARS = 5000
    settings.RLSTUDIO_IMPORT_MAX_SECONDS = 60
    return settings


def send(world, dataset_id: int, name: str, content: bytes):
    return world.client("member").post(
        f"/api/datasets/{dataset_id}/versions/",
        {"file": SimpleUploadedFile(name, content)},
        format="multipart",
    )


def refusal(response) -> str:
    assert response.status_code == 400, response.content[:300]
    error = response.json()["error"]
    assert error["fields"]["file"], error
    return error["message"]


def nothing_stored(dataset_id: int) -> bool:
    return not (
        DatasetVersion.objects.filter(dataset_id=dataset_id).exists()
        or DatasetImport.objects.filter(dataset_id=dataset_id).exists()
    )


def test_a_compressed_parquet_bomb_is_refused_while_it_streams(world, bounded):
    """Dictionary-encoded, the footer counts the repeated text once: the bound is met
    while streaming, one record batch at a time, before any row is kept."""
    dataset_id = make_dataset(world)
    content = bomb(rows=900, chars=4000)  # 3.6 MB of text in a file of a few KB
    assert len(content) < 40_000
    message = refusal(send(world, dataset_id, "bomb.parquet", content))
    assert "decodes to more than 2 MiB of data (the limit on decoded size)" in message
    assert "RLSTUDIO_IMPORT_MAX_DECODED_BYTES" in message
    assert nothing_stored(dataset_id)
    # The legitimate upload still works.
    ok = send(world, dataset_id, "small.parquet", bomb(rows=20, chars=100))
    assert ok.status_code == 201, ok.content[:300]


def test_a_parquet_file_declaring_too_much_is_refused_from_its_footer(world, bounded):
    dataset_id = make_dataset(world)
    content = bomb(rows=900, chars=4000, dictionary=False)
    message = refusal(send(world, dataset_id, "plain.parquet", content))
    assert "the file declares" in message and "limit on decoded size is 2 MiB" in message
    assert nothing_stored(dataset_id)


def test_too_many_rows_are_refused(world, bounded):
    dataset_id = make_dataset(world)
    rows = "\n".join(json.dumps(row) for row in mixed_rows(1) * 1001).encode()
    message = refusal(send(world, dataset_id, "many.jsonl", rows))
    assert "more than 1,000 rows" in message
    assert nothing_stored(dataset_id)


def test_one_enormous_value_is_refused_naming_its_row_and_column(world, bounded):
    dataset_id = make_dataset(world)
    csv_text = "prompt,answer\nWhat is 1+1?,2\n" + "x" * 6000 + ",3\n"
    message = refusal(send(world, dataset_id, "long.csv", csv_text.encode()))
    assert "row 2, column 'prompt'" in message and "6,000 characters" in message
    assert nothing_stored(dataset_id)


def test_a_parquet_value_over_the_cell_bound_is_refused_while_streaming(world, bounded):
    dataset_id = make_dataset(world)
    content = bomb(rows=50, chars=10, long_last=5001)  # the footer looks harmless
    message = refusal(send(world, dataset_id, "sneaky.parquet", content))
    assert "column 'prompt'" in message and "5,001 characters" in message
    assert nothing_stored(dataset_id)


def test_a_large_import_is_bounded_in_the_worker_too(world, bounded):
    """Above the background threshold the web process only stages the file; the worker
    reads it with the same bounds and the import fails naming the bound."""
    bounded.RLSTUDIO_ASYNC_IMPORT_BYTES = 100
    dataset_id = make_dataset(world)
    response = send(world, dataset_id, "big.parquet", bomb(rows=50, chars=10, long_last=5001))
    assert response.status_code == 202, response.content[:300]
    job = DatasetImport.objects.get(pk=response.json()["id"])
    claimed = imports.take(job.pk, lease_s=60)
    assert isinstance(claimed, DatasetImport)
    assert imports.run(claimed) == imports.S.FAILED
    job.refresh_from_db()
    assert "5,001 characters" in job.error and "limit on one value" in job.error
    assert not DatasetVersion.objects.filter(dataset_id=dataset_id).exists()


@pytest.mark.parametrize("arrow_dictionary", [True, False], ids=["arrow-dictionary", "pages"])
def test_a_dictionary_encoded_bomb_is_refused_by_its_decoded_size(world, bounded, arrow_dictionary):
    """900 rows refer to one 4,000-character prompt: 3.6 MB decoded, about 1 KB stored,
    and the footer declares only the one value. Every row is counted as decoded."""
    dataset_id = make_dataset(world)
    content = dictionary_bomb(rows=900, chars=4000, arrow_dictionary=arrow_dictionary)
    assert len(content) < 2_000
    message = refusal(send(world, dataset_id, "dictionary.parquet", content))
    assert "decodes to more than 2 MiB of data (the limit on decoded size)" in message
    assert nothing_stored(dataset_id)


def test_a_dictionary_value_over_the_cell_bound_is_refused(world, bounded):
    """The longest-value check looks at the dictionary values the rows refer to."""
    dataset_id = make_dataset(world)
    message = refusal(send(world, dataset_id, "long.parquet", dictionary_bomb(50, 6000)))
    assert "column 'prompt'" in message and "6,000 characters" in message
    assert "the limit on one value is 5,000 characters" in message
    assert nothing_stored(dataset_id)


def test_a_dictionary_encoded_bomb_is_refused_in_the_worker_too(world, bounded):
    bounded.RLSTUDIO_ASYNC_IMPORT_BYTES = 100  # the web process stages it for a worker
    dataset_id = make_dataset(world)
    response = send(world, dataset_id, "big.parquet", dictionary_bomb(rows=900, chars=4000))
    assert response.status_code == 202, response.content[:300]
    claimed = imports.take(response.json()["id"], lease_s=60)
    assert isinstance(claimed, DatasetImport)
    assert imports.run(claimed) == imports.S.FAILED
    job = DatasetImport.objects.get(pk=claimed.pk)
    assert "decodes to more than 2 MiB of data (the limit on decoded size)" in job.error
    assert not DatasetVersion.objects.filter(dataset_id=dataset_id).exists()


def test_a_dictionary_encoded_file_of_small_values_is_accepted_and_read(world, bounded):
    """The positive control: a dictionary column of short values, well within the bounds,
    becomes a version whose rows read back as sent."""
    dataset_id = make_dataset(world)
    response = send(world, dataset_id, "small.parquet", dictionary_bomb(rows=500, chars=40))
    assert response.status_code == 201, response.content[:300]
    version = response.json()
    assert version["row_count"] == 500
    assert version["columns"][0]["type"].startswith("dictionary<values=string")
    preview = world.client("viewer").get(
        f"/api/datasets/{dataset_id}/versions/1/preview/", {"limit": 100}
    )
    body = preview.json()
    assert preview.status_code == 200 and len(body["rows"]) == 100
    assert body["rows"][0] == {"prompt": "a" * 40, "answer": "1"}
    assert (body["truncated"], body["next_offset"]) == (False, 100)


def store_unchecked(world, dataset_id: int, content: bytes, tmp_path) -> DatasetVersion:
    """A version stored as it came, with no measure recorded: what versions stored before
    dictionary columns were counted as decoded look like."""
    path = tmp_path / "unchecked.parquet"
    path.write_bytes(content)
    metadata = pq.read_metadata(path)
    ingested = IngestedFile(
        path=path,
        source_format="parquet",
        data_format="prompt_answer",
        mapping={"prompt_key": "prompt", "answer_key": "answer", "data_source": "default"},
        row_count=metadata.num_rows,
        columns=[{"name": f.name, "type": str(f.type)} for f in metadata.schema.to_arrow_schema()],
        stats={},
        checksum=sha256_of(path),
        size_bytes=len(content),
    )
    dataset = Dataset.objects.get(pk=dataset_id)
    return store_version(dataset, ingested, message="", user=world.member)


def unreadable(response) -> str:
    assert response.status_code == 422, (response.status_code, response["Content-Type"])
    assert response["Content-Type"].startswith("application/json")
    error = response.json()["error"]
    assert error["code"] == "version_out_of_bounds", error
    return str(error["message"])


@pytest.mark.parametrize("read", ["preview", "diff", "download"])
def test_a_stored_version_over_the_bounds_is_refused_at_read(world, bounded, tmp_path, read):
    dataset_id = make_dataset(world)
    ok = send(world, dataset_id, "small.parquet", dictionary_bomb(rows=20, chars=40))
    assert ok.status_code == 201, ok.content[:300]
    store_unchecked(world, dataset_id, dictionary_bomb(rows=900, chars=4000), tmp_path)
    url = {
        "preview": f"/api/datasets/{dataset_id}/versions/2/preview/?limit=100",
        "diff": f"/api/datasets/{dataset_id}/diff/?from=1&to=2",
        "download": f"/api/datasets/{dataset_id}/versions/2/download/",
    }[read]
    message = unreadable(world.client("viewer").get(url))
    assert message.startswith("Version 2 of dataset 'gsm8k' is not read")
    assert "decodes to more than 2 MiB of data (the limit on decoded size)" in message


def test_a_worker_reading_a_version_over_the_bounds_fails_naming_the_bound(
    world, bounded, tmp_path
):
    """A reward test-run (a Celery task) reads a version's rows through `read_slice`."""
    from studio.datasets.stored import VersionOutOfBounds

    dataset_id = make_dataset(world)
    version = store_unchecked(world, dataset_id, dictionary_bomb(50, 6000), tmp_path)
    with pytest.raises(VersionOutOfBounds, match="the limit on one value is 5,000 characters"):
        dataset_records(version, 0, 5)


def test_a_version_recorded_within_the_bounds_is_refused_once_they_are_lowered(world, bounded):
    from studio.datasets.stored import RECORD_KEY

    dataset_id = make_dataset(world)
    ok = send(world, dataset_id, "ok.parquet", dictionary_bomb(rows=400, chars=4000))
    assert ok.status_code == 201, ok.content[:300]
    assert ok.json()["stats"]["rows_without_split"] == 400
    recorded = DatasetVersion.objects.get(dataset_id=dataset_id).stats[RECORD_KEY]
    assert recorded["rows"] == 400 and recorded["longest_value_chars"] == 4000
    assert recorded["bytes"] >= 400 * 4000  # every row counted, not the dictionary once
    bounded.RLSTUDIO_IMPORT_MAX_DECODED_BYTES = 1024**2
    url = f"/api/datasets/{dataset_id}/versions/1/preview/"
    message = unreadable(world.client("viewer").get(url))
    assert "decodes to more than 1 MiB of data (the limit on decoded size)" in message


def test_a_json_lines_upload_is_stored_dictionary_encoded_and_read_as_decoded(world, bounded):
    """JSON lines and CSV are parsed by Python, not pyarrow, so no column of theirs arrives
    dictionary-encoded; their stored parquet copy is, on disk, and a read that measures it
    (no record kept) counts every row's text."""
    dataset_id = make_dataset(world)
    line = json.dumps({"prompt": "q" * 4000, "answer": "1"})
    ok = send(world, dataset_id, "rows.jsonl", "\n".join([line] * 400).encode())
    assert ok.status_code == 201, ok.content[:300]
    version = DatasetVersion.objects.get(dataset_id=dataset_id)
    assert version.size_bytes < 20_000  # 1.6 MB of text, stored once in a dictionary page
    DatasetVersion.objects.filter(pk=version.pk).update(stats={})  # as if never measured
    bounded.RLSTUDIO_IMPORT_MAX_DECODED_BYTES = 1024**2
    url = f"/api/datasets/{dataset_id}/versions/1/preview/"
    message = unreadable(world.client("viewer").get(url))
    assert "decodes to more than 1 MiB of data (the limit on decoded size)" in message


def test_a_preview_or_diff_page_over_its_byte_bound_is_cut_and_says_so(world, bounded):
    bounded.RLSTUDIO_PREVIEW_MAX_BYTES = 10_000
    dataset_id = make_dataset(world)
    for answer in ("1", "2"):  # two versions whose 30 rows all differ
        rows = [{"prompt": f"{i} " + "p" * 3000, "answer": answer} for i in range(30)]
        content = "\n".join(json.dumps(row) for row in rows).encode()
        assert send(world, dataset_id, "rows.jsonl", content).status_code == 201
    viewer = world.client("viewer")
    preview = viewer.get(f"/api/datasets/{dataset_id}/versions/1/preview/", {"limit": 30})
    body = preview.json()
    assert preview.status_code == 200 and len(preview.content) < 12_000
    assert body["truncated"] is True and 0 < len(body["rows"]) < 30
    assert body["next_offset"] == len(body["rows"])
    assert "RLSTUDIO_PREVIEW_MAX_BYTES" in body["message"]
    diff = viewer.get(f"/api/datasets/{dataset_id}/diff/", {"from": 1, "to": 2, "limit": 30})
    page = diff.json()
    assert diff.status_code == 200 and len(diff.content) < 12_000
    assert page["truncated"] is True and page["next_offset"] == len(page["rows"]) > 0

    bounded.RLSTUDIO_PREVIEW_MAX_BYTES = 1_000  # one row alone is larger than a page
    too_large = viewer.get(f"/api/datasets/{dataset_id}/versions/1/preview/")
    assert too_large.status_code == 422
    error = too_large.json()["error"]
    assert error["code"] == "row_too_large" and "RLSTUDIO_PREVIEW_MAX_BYTES" in error["message"]

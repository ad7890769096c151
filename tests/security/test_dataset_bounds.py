"""A dataset upload is bounded by what it decodes to, not by its size on disk: a small
compressed parquet file full of repeated text, too many rows, or one enormous value is
refused with a 400 naming the bound, and leaves no version and no import behind.

The bounds are lowered here so the files stay small; `bench/dataset_bomb.py` sends the
full-size file to a running studio and measures the web process and the worker."""

from __future__ import annotations

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from studio.datasets import imports
from studio.datasets.models import DatasetImport, DatasetVersion
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

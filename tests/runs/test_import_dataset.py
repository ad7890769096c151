"""Large uploads are imported in the background: 202 at once, then a worker makes the
version (or says what is wrong with the file). The live stack (live/test_runs_on_ray.py)
uploads every dataset this way through a real worker."""

from __future__ import annotations

import io
from datetime import timedelta

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from studio.datasets import imports
from studio.datasets.models import Dataset, DatasetImport, DatasetVersion
from studio.projects.models import AuditEvent
from tests.studio.conftest import World


def parquet_bytes(rows: int = 50, bad_row: int | None = None) -> bytes:
    table = pa.Table.from_pylist(
        [
            {
                "data_source": "arith",
                "prompt": [{"role": "user", "content": f"What is {i} + 1?"}],
                "reward_model": {"style": "rule", "ground_truth": str(i + 1)}
                if i != bad_row
                else None,
                "extra_info": {"split": "train", "index": i},
            }
            for i in range(rows)
        ]
    )
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


@pytest.fixture
def large(settings, tmp_path):
    settings.RLSTUDIO_ASYNC_IMPORT_BYTES = 100  # every upload here counts as large
    settings.MEDIA_ROOT = tmp_path / "media"


def upload(world: World, dataset: Dataset, content: bytes, name: str = "big.parquet"):
    return world.client("member").post(
        f"/api/datasets/{dataset.pk}/versions/",
        {"file": SimpleUploadedFile(name, content), "message": "big one"},
        format="multipart",
    )


def dataset_of(world: World) -> Dataset:
    return Dataset.objects.create(project=world.project, name="big", created_by=world.owner)


def test_a_large_upload_answers_202_and_is_queued_for_a_worker(
    world: World, large, django_capture_on_commit_callbacks
):
    dataset = dataset_of(world)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = upload(world, dataset, parquet_bytes())

    assert response.status_code == 202, response.json()
    body = response.json()
    assert (body["status"], body["filename"], body["version_number"]) == (
        "queued",
        "big.parquet",
        None,
    )
    assert len(callbacks) == 1  # the task is sent once the row is committed
    job = DatasetImport.objects.get(pk=body["id"])
    assert default_storage.exists(job.staged_name)
    assert not DatasetVersion.objects.filter(dataset=dataset).exists()
    shown = world.client("viewer").get(f"/api/datasets/{dataset.pk}/").json()
    assert [i["status"] for i in shown["imports"]] == ["queued"]


def test_the_worker_makes_the_version_and_deletes_the_staged_file(world: World, large):
    dataset = dataset_of(world)
    job_id = upload(world, dataset, parquet_bytes()).json()["id"]

    job = imports.take(job_id, lease_s=60)
    assert isinstance(job, DatasetImport)
    assert imports.run(job) == "succeeded"

    job.refresh_from_db()
    assert job.status == "succeeded"
    assert job.version is not None
    assert job.version.row_count == 50
    assert not default_storage.exists(job.staged_name)
    assert AuditEvent.objects.filter(action="dataset.upload", object_id=str(job.version.pk))
    shown = world.client("viewer").get(f"/api/datasets/{dataset.pk}/").json()
    assert shown["latest_version"]["number"] == 1
    assert shown["imports"][0]["version_number"] == 1
    assert imports.take(job_id, lease_s=60) is None  # a redelivery has nothing to do


def test_a_bad_large_file_fails_with_the_row_and_column_and_makes_no_version(world: World, large):
    dataset = dataset_of(world)
    job_id = upload(world, dataset, parquet_bytes(bad_row=7)).json()["id"]

    job = imports.take(job_id, lease_s=60)
    assert isinstance(job, DatasetImport)
    assert imports.run(job) == "failed"

    job.refresh_from_db()
    assert job.status == "failed"
    assert "big.parquet, row 8, column 'reward_model'" in job.error
    assert not DatasetVersion.objects.filter(dataset=dataset).exists()
    assert not default_storage.exists(job.staged_name)


def test_one_worker_at_a_time_and_a_dead_workers_import_is_taken_again(world: World, large):
    dataset = dataset_of(world)
    job_id = upload(world, dataset, parquet_bytes()).json()["id"]

    first = imports.take(job_id, lease_s=60)
    second = imports.take(job_id, lease_s=60)
    assert isinstance(first, DatasetImport)
    assert isinstance(second, float)
    assert 55 < second <= 60  # look again when the first worker's lease ends

    # The first worker died: its lease runs out and the import is taken again.
    DatasetImport.objects.filter(pk=job_id).update(lease_until=timezone.now() - timedelta(1))
    assert imports.stalled(older_than_s=60) == [job_id]
    again = imports.take(job_id, lease_s=60)
    assert isinstance(again, DatasetImport)
    assert again.tries == 2


def test_an_import_that_keeps_killing_its_worker_fails(world: World, large):
    dataset = dataset_of(world)
    job_id = upload(world, dataset, parquet_bytes()).json()["id"]
    for _ in range(imports.MAX_TRIES):
        assert isinstance(imports.take(job_id, lease_s=60), DatasetImport)
        DatasetImport.objects.filter(pk=job_id).update(
            lease_until=timezone.now() - timedelta(seconds=1)
        )

    assert imports.take(job_id, lease_s=60) is None

    job = DatasetImport.objects.get(pk=job_id)
    assert job.status == "failed"
    assert "stopped 3 times" in job.error
    assert not default_storage.exists(job.staged_name)


def test_small_uploads_still_make_their_version_at_once(world: World, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    dataset = dataset_of(world)
    response = upload(world, dataset, parquet_bytes(rows=5))
    assert response.status_code == 201
    assert response.json()["row_count"] == 5

"""Large uploads become versions in the background (`workers.import_dataset`).

An upload that decodes to more than `RLSTUDIO_ASYNC_IMPORT_BYTES` (studio.datasets.limits)
is stored as it came (`stage`), a
`DatasetImport` row is queued, and the API answers 202 at once. The worker then runs
the same validation and normalisation as a small upload (`add_version`).

Exactly one worker imports a file at a time: `take` claims the row by conditional
update with a lease shorter than the broker's visibility timeout. A worker that dies
mid-import leaves the lease to expire; the redelivered task (or the sweep, every
minute) takes it again. The version and the `succeeded` status are written in one
transaction, so a crash after it changes nothing and a crash before it leaves no version.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import uuid
from dataclasses import asdict
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.core.files import File
from django.core.files.storage import default_storage
from django.db.models import F, Q
from django.utils import timezone

from studio.datasets.models import Dataset, DatasetImport, DatasetVersion, ImportStatus
from studio.datasets.normalise import ColumnMapping
from studio.datasets.sniff import UploadError
from studio.datasets.versions import add_version
from studio.projects.models import AuditEvent

logger = logging.getLogger(__name__)

S = ImportStatus
TASK_NAME = "workers.import_dataset"
MAX_TRIES = 3  # a file that kills its worker this many times fails


def stage(
    dataset: Dataset,
    source: Path,
    filename: str,
    mapping: ColumnMapping,
    message: str,
    user: Any,
) -> DatasetImport:
    """Store the raw upload and queue its import (the caller enqueues after commit)."""
    name = f"imports/d{dataset.pk}/{uuid.uuid4().hex}{Path(filename).suffix.lower()[:10]}"
    with source.open("rb") as handle:
        staged = default_storage.save(name, File(handle, name=Path(name).name))
    return DatasetImport.objects.create(
        dataset=dataset,
        filename=filename,
        staged_name=staged,
        size_bytes=source.stat().st_size,
        mapping=asdict(mapping),
        message=message,
        created_by=user,
    )


def enqueue(import_id: int) -> None:
    from kombu.exceptions import OperationalError

    from workers.celery_app import app  # the broker settings live with the app

    try:
        app.send_task(TASK_NAME, args=[import_id], retry=False)
    except OperationalError as exc:  # the sweep enqueues it again once Redis is back
        logger.warning("dataset import %s not enqueued: %s", import_id, exc)


def take(import_id: int, lease_s: float) -> DatasetImport | float | None:
    """Claim the import for `lease_s`: the row, or the seconds until another worker's
    lease ends (try again then), or None when there is nothing to do."""
    now = timezone.now()
    claimable = Q(status=S.QUEUED) | Q(status=S.RUNNING, lease_until__lt=now)
    claimed = (
        DatasetImport.objects.filter(claimable, pk=import_id)
        .exclude(tries__gte=MAX_TRIES)
        .update(
            status=S.RUNNING,
            started_at=now,
            lease_until=now + timedelta(seconds=lease_s),
            tries=F("tries") + 1,
        )
    )
    found = DatasetImport.objects.select_related("dataset__project", "created_by").filter(
        pk=import_id
    )
    job = found.first()
    if job is None:
        return None
    if claimed:
        return job
    if job.status == S.RUNNING and job.lease_until is not None and job.lease_until > now:
        return (job.lease_until - now).total_seconds()
    if job.status in (S.QUEUED, S.RUNNING):  # out of tries: it killed its worker each time
        finish_failed(job, f"The import stopped {job.tries} times without finishing.")
    return None


def finish_failed(job: DatasetImport, error: str) -> None:
    DatasetImport.objects.filter(pk=job.pk, status__in=[S.QUEUED, S.RUNNING]).update(
        status=S.FAILED, error=error, finished_at=timezone.now(), lease_until=None
    )
    _delete_staged(job)


def _delete_staged(job: DatasetImport) -> None:
    if job.staged_name:
        default_storage.delete(job.staged_name)


def _local_copy(name: str, scratch: Path) -> Path:
    """A path on this machine: the stored file itself, or a copy (object storage)."""
    try:
        return Path(default_storage.path(name))
    except NotImplementedError:
        target = scratch / Path(name).name
        with default_storage.open(name, "rb") as src, target.open("wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)
        return target


def run(job: DatasetImport) -> ImportStatus:
    """Validate and store the staged file as the dataset's next version."""

    def succeeded(version: DatasetVersion) -> None:  # inside add_version's transaction
        DatasetImport.objects.filter(pk=job.pk).update(
            status=S.SUCCEEDED, version=version, finished_at=timezone.now(), lease_until=None
        )
        AuditEvent.objects.create(
            project=job.dataset.project,
            actor=job.created_by,
            action="dataset.upload",
            object_type="datasetversion",
            object_id=str(version.pk),
            detail={
                "dataset": job.dataset.name,
                "number": version.number,
                "rows": version.row_count,
                "checksum": version.checksum,
                "import": job.pk,
            },
        )

    scratch = Path(tempfile.mkdtemp(prefix="rlstudio-import-"))
    try:
        add_version(
            job.dataset,
            _local_copy(job.staged_name, scratch),
            job.filename,
            ColumnMapping(**job.mapping),
            message=job.message,
            user=job.created_by,
            on_created=succeeded,
        )
    except UploadError as exc:
        finish_failed(job, str(exc))
        return S.FAILED
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    _delete_staged(job)
    return S.SUCCEEDED


def stalled(older_than_s: float) -> list[int]:
    """Imports no worker is on: queued for a while (its message was lost) or running
    with an expired lease (its worker died)."""
    now = timezone.now()
    return list(
        DatasetImport.objects.filter(
            Q(status=S.QUEUED, created_at__lt=now - timedelta(seconds=older_than_s))
            | Q(status=S.RUNNING, lease_until__lt=now)
        ).values_list("pk", flat=True)
    )

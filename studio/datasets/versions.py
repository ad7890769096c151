"""Creating dataset versions from files: validate, stage, then store atomically.

`store_version` is the one way a version is stored (uploads through `add_version`, and
exports of labelled samples): a file validated and normalised in a private staging
folder is moved into storage inside the transaction that creates the row, and deleted
again if anything in that transaction fails, so a failure leaves neither a row nor a
file behind.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files import File
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import Max

from studio.datasets.models import Dataset, DatasetVersion
from studio.datasets.normalise import ColumnMapping, IngestedFile, ingest


class StagedFile(File):
    """A staged file that FileSystemStorage moves (renames) instead of copying."""

    def __init__(self, path: Path) -> None:
        super().__init__(path.open("rb"), name=path.name)
        self._path = path

    def temporary_file_path(self) -> str:
        return str(self._path)


def add_version(
    dataset: Dataset,
    source: Path,
    filename: str,
    mapping: ColumnMapping,
    *,
    message: str,
    user: Any,
    on_created: Callable[[DatasetVersion], None] | None = None,
) -> DatasetVersion:
    """Validate `source` (the user's file, named `filename`) and store it as the next
    version. Raises `UploadError` for bad data; `on_created` runs in the transaction
    (for the audit event)."""
    staging = staging_folder()
    try:
        ingested = ingest(source, filename, mapping, staging)
        return store_version(dataset, ingested, message=message, user=user, on_created=on_created)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def staging_folder() -> Path:
    """A private folder for a file on its way into storage; the caller removes it."""
    return Path(tempfile.mkdtemp(prefix="rlstudio-dataset-", dir=settings.FILE_UPLOAD_TEMP_DIR))


def store_version(
    dataset: Dataset,
    ingested: IngestedFile,
    *,
    message: str,
    user: Any,
    on_created: Callable[[DatasetVersion], None] | None = None,
) -> DatasetVersion:
    """Store the staged, validated `ingested` file as the next version of `dataset`.
    `on_created` runs in the transaction (the caller's audit event): either both are
    written or neither, and the stored file is removed."""
    saved: str | None = None
    try:
        with transaction.atomic():
            # Lock the dataset row: concurrent uploads get consecutive numbers.
            Dataset.objects.select_for_update().filter(pk=dataset.pk).get()
            number = (dataset.versions.aggregate(last=Max("number"))["last"] or 0) + 1
            name = (
                f"datasets/p{dataset.project_id}/d{dataset.pk}/"
                f"v{number}-{ingested.checksum[:12]}.parquet"
            )
            staged = StagedFile(ingested.path)
            try:
                saved = default_storage.save(name, staged)
            finally:
                staged.close()
            version = DatasetVersion.objects.create(
                dataset=dataset,
                number=number,
                file=saved,
                source_format=ingested.source_format,
                data_format=ingested.data_format,
                column_mapping=ingested.mapping,
                size_bytes=ingested.size_bytes,
                checksum=ingested.checksum,
                row_count=ingested.row_count,
                columns=ingested.columns,
                stats=ingested.stats,
                message=message,
                created_by=user,
            )
            if on_created is not None:
                on_created(version)
    except BaseException:
        if saved is not None:
            default_storage.delete(saved)
        raise
    return version


def delete_files(names: list[str]) -> None:
    """Remove stored version files (after the rows are gone)."""
    for name in names:
        if name:
            default_storage.delete(name)

"""Datasets with immutable versions; each version is one normalised parquet file."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from studio.projects.models import Project, ProjectResource


class Dataset(ProjectResource):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="datasets")

    class Meta(ProjectResource.Meta):
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="dataset_name_per_project")
        ]


class DataFormat(models.TextChoices):
    VERL = "verl", "verl parquet/JSONL"
    PROMPT_ANSWER = "prompt_answer", "prompt + answer columns"


class DatasetVersion(models.Model):
    """Never changed after creation: runs pin a version, labels export a new one."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    file = models.FileField(upload_to="datasets/%Y/%m/", max_length=300)
    source_format = models.CharField(max_length=16)  # parquet | jsonl | csv, as uploaded
    data_format = models.CharField(max_length=16, choices=DataFormat.choices)
    column_mapping = models.JSONField(default=dict, blank=True)
    size_bytes = models.BigIntegerField()
    checksum = models.CharField(max_length=64)  # sha256 of the normalised parquet
    row_count = models.PositiveIntegerField()
    columns = models.JSONField(default=list)
    stats = models.JSONField(default=dict)  # prompt length histogram, data sources, splits
    message = models.CharField(max_length=300, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["dataset", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "number"], name="dataset_version_number")
        ]

    def __str__(self) -> str:
        return f"{self.dataset.name} v{self.number}"


class ImportStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


class DatasetImport(models.Model):
    """A large upload being validated and normalised by a worker (`import_dataset`).

    The raw file waits in storage (`staged_name`) until the worker has made it a
    version (`version`, in the same transaction that marks this succeeded) or refused it
    (`error` names the row and column); then the staged file is deleted.
    """

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="imports")
    status = models.CharField(
        max_length=16, choices=ImportStatus.choices, default=ImportStatus.QUEUED, db_index=True
    )
    filename = models.CharField(max_length=300)  # as the user named it
    staged_name = models.CharField(max_length=300)  # in default storage, until it ends
    size_bytes = models.BigIntegerField()
    mapping = models.JSONField(default=dict)  # studio.datasets.normalise.ColumnMapping fields
    message = models.CharField(max_length=300, blank=True)
    error = models.TextField(blank=True)
    version = models.OneToOneField(
        DatasetVersion, null=True, blank=True, on_delete=models.SET_NULL, related_name="import_job"
    )
    tries = models.PositiveIntegerField(default=0)
    lease_until = models.DateTimeField(null=True, blank=True)  # a worker holds it until
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["dataset", "-created_at"]

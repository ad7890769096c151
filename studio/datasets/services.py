"""Creating datasets (versions are stored by `studio.datasets.versions`)."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from studio.datasets.models import Dataset
from studio.projects.models import AuditEvent, Project


def create_dataset(project: Project, name: str, description: str, user: Any) -> Dataset:
    """An empty dataset, with its audit event (the serializer checked the name)."""
    with transaction.atomic():
        dataset = Dataset.objects.create(
            project=project, name=name, description=description, created_by=user
        )
        AuditEvent.record("dataset.create", dataset, project, user, name=dataset.name)
    return dataset

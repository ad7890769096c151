"""Labelling rollout samples: a user's own labels, each change with its audit event."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from studio.projects.models import AuditEvent, Project
from studio.telemetry.models import RolloutSample, SampleLabel


def add_label(
    sample: RolloutSample, project: Project, user: Any, label: str, note: str
) -> tuple[SampleLabel, bool]:
    """`user`'s label on `sample` (the note replaced when it exists); True if new."""
    with transaction.atomic():
        found, created = SampleLabel.objects.update_or_create(
            sample=sample, author=user, label=label, defaults={"note": note}
        )
        AuditEvent.record("sample.label", found, project, user, sample=sample.pk, label=label)
    return found, created


def remove_label(sample: RolloutSample, project: Project, user: Any, label: str) -> bool:
    """Remove `user`'s label named `label` from `sample`; False when there is none."""
    found = SampleLabel.objects.filter(sample=sample, author=user, label=label).first()
    if found is None:
        return False
    with transaction.atomic():
        AuditEvent.record("sample.unlabel", found, project, user, sample=sample.pk, label=label)
        found.delete()
    return True

"""Labelling rollout samples: a user's own labels, each change with its audit event.

"good" and "bad" are exclusive (`EXCLUSIVE_LABELS`): a user's sample holds at most one
of them, and adding one removes the other."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from studio.projects.models import AuditEvent, Project
from studio.telemetry.models import EXCLUSIVE_LABELS, RolloutSample, SampleLabel


def add_label(
    sample: RolloutSample, project: Project, user: Any, label: str, note: str
) -> tuple[SampleLabel, bool]:
    """`user`'s label on `sample` (the note replaced when it exists); True if new. An
    exclusive label replaces the user's other exclusive label on the sample."""
    with transaction.atomic():
        # One label change per sample at a time: "good" and "bad" sent together can't
        # both find the other absent (the constraint would refuse the second with a 500).
        RolloutSample.objects.select_for_update().filter(pk=sample.pk).first()
        if label in EXCLUSIVE_LABELS:
            others = SampleLabel.objects.filter(
                sample=sample, author=user, label__in=EXCLUSIVE_LABELS
            ).exclude(label=label)
            for other in others:
                AuditEvent.record(
                    "sample.unlabel", other, project, user, sample=sample.pk, label=other.label
                )
                other.delete()
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

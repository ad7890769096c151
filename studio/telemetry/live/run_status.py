"""`run-status` events: every change of a run's status, live and replayed.

On a project's stream they carry the status change's id (`RunStatusChange.pk`, which
grows with every change), so a reconnecting client resumes from Last-Event-ID. On a
run's stream they carry no id: that stream's ids are the trainer's records, and a
client learns the current status from the snapshot sent at every (re)connect.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Any

from django.db import transaction

from studio.runs.models import Run, RunStatusChange
from studio.telemetry.live import pubsub
from studio.telemetry.live.sse_frames import frame

RUN_STATUS = "run-status"


def payload(
    run_id: int, status: str, previous: str | None, reason: str, at: datetime
) -> dict[str, Any]:
    return {
        "run": run_id,
        "status": status,
        "previous": previous,
        "reason": reason,
        "at": at.isoformat(),
    }


def change_event(change: RunStatusChange, with_id: bool) -> bytes:
    data = payload(
        change.run_id, change.to_status, change.from_status or None, change.reason, change.at
    )
    return frame(RUN_STATUS, data, str(change.pk) if with_id else None)


def announce_status_change(change: RunStatusChange) -> None:
    """Publish the change to the run's and the project's streams once it is committed."""
    project_id = Run.objects.values_list("project_id", flat=True).get(pk=change.run_id)
    messages = [
        (pubsub.run_channel(change.run_id), pubsub.message(None, change_event(change, False))),
        (
            pubsub.project_channel(project_id),
            pubsub.message(str(change.pk).encode(), change_event(change, True)),
        ),
    ]
    transaction.on_commit(partial(pubsub.publish, messages), robust=True)


def snapshot_of(run_id: int) -> bytes:
    """The run's current status, sent first on every (re)connect of its stream."""
    run = Run.objects.only("status", "status_reason", "updated_at").get(pk=run_id)
    return frame(RUN_STATUS, payload(run.pk, run.status, None, run.status_reason, run.updated_at))


def replay_project(project_id: int, after: int, limit: int) -> list[tuple[int, bytes]]:
    changes = RunStatusChange.objects.filter(run__project_id=project_id, pk__gt=after).order_by(
        "pk"
    )[:limit]
    return [(change.pk, change_event(change, True)) for change in changes]


def last_change_id(project_id: int) -> int:
    latest = (
        RunStatusChange.objects.filter(run__project_id=project_id)
        .order_by("-pk")
        .values_list("pk", flat=True)
        .first()
    )
    return latest or 0

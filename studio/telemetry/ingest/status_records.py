"""Status records drive the run: what the trainer reports about itself (running,
succeeded, failed, cancelled) moves the run through `lifecycle.transition`."""

from __future__ import annotations

from django.utils import timezone

from studio.runs import lifecycle
from studio.runs.models import Run, RunAttempt, RunStatus
from studio.telemetry.ingest.records import StatusRecord

S = RunStatus
# From the run's current status, the transitions that reach what the trainer reported.
# The trainer may report an end the studio had not asked for (a job that finished while
# the studio believed it was starting, a cancellation from outside): go through the
# intermediate status, so the history stays a walk of the state machine.
_PATHS: dict[str, dict[RunStatus, tuple[RunStatus, ...]]] = {
    "running": {S.STARTING: (S.RUNNING,)},
    "succeeded": {
        S.STARTING: (S.RUNNING, S.SUCCEEDED),
        S.RUNNING: (S.SUCCEEDED,),
        S.CANCELLING: (S.SUCCEEDED,),
    },
    "failed": {S.STARTING: (S.FAILED,), S.RUNNING: (S.FAILED,), S.CANCELLING: (S.FAILED,)},
    "cancelled": {
        S.STARTING: (S.CANCELLING, S.CANCELLED),
        S.RUNNING: (S.CANCELLING, S.CANCELLED),
        S.CANCELLING: (S.CANCELLED,),
    },
}
_STATUS_TRIES = 3  # the run's status may change under us (a user cancels); re-read


def apply_status(run_id: int, attempt: RunAttempt, record: StatusRecord) -> None:
    """Move the run to what the trainer reported, if this is the run's latest attempt
    and the state machine allows it from where the run is; otherwise only the record
    is kept (a late report from an attempt that was replaced must not revive a run)."""
    if RunAttempt.objects.filter(run_id=run_id, number__gt=attempt.number).exists():
        return
    reported, detail = record.data.status, record.data.detail
    now = timezone.now()
    if reported == "running":
        RunAttempt.objects.filter(pk=attempt.pk, started_at__isnull=True).update(started_at=now)
    else:
        RunAttempt.objects.filter(pk=attempt.pk, finished_at__isnull=True).update(
            finished_at=now, exit_message=detail
        )
    reason = detail.strip().splitlines()[-1][:500] if detail.strip() else ""
    reason = reason or f"the trainer reported {reported} (attempt {attempt.number})"
    fields = {"last_error": detail} if reported == "failed" else {}
    for _ in range(_STATUS_TRIES):
        current = RunStatus(Run.objects.values_list("status", flat=True).get(pk=run_id))
        path = _PATHS[reported].get(current)
        if path is None:
            return  # already there, or ended otherwise (e.g. cancelled by a user)
        source = current
        for target in path:
            extra = fields if target == path[-1] else {}
            if not lifecycle.transition(run_id, {source}, target, reason, **extra):
                break
            source = target
        else:
            return

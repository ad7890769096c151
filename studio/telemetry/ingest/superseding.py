"""Superseding: when a run resumes as a new attempt, what earlier attempts reported past
the resume step is replaced by what the new attempt reports, so it is hidden.

Metric points, rollout samples and the ingest ledger (so streams don't replay them) are
flagged `superseded`; alerts past the step are deleted (they are derived data, and the
new attempt's metrics raise their own). Log lines and checkpoints are kept: they record
what happened (why attempt 1 failed) and what exists on disk.
"""

from __future__ import annotations

import logging

from django.db.models import Max

from studio.runs.models import Checkpoint, RunAttempt
from studio.telemetry.models import IngestedRecord, MetricPoint, RolloutSample, RunAlert

logger = logging.getLogger(__name__)

FROM_SCRATCH = -1  # no checkpoint to resume from: every step is reported again


def resume_step_of(attempt: RunAttempt) -> int:
    """The step `attempt` continues after: the launcher's `resume_from_step` when it
    set one, else the run's latest registered checkpoint of an earlier attempt (what the
    trainer's `checkpoint.resume=auto` picks up), else none (from scratch)."""
    if attempt.resume_from_step is not None:
        return attempt.resume_from_step
    latest = Checkpoint.objects.filter(run_id=attempt.run_id, attempt__lt=attempt.number).aggregate(
        step=Max("step")
    )["step"]
    return FROM_SCRATCH if latest is None else int(latest)


def supersede_earlier_attempts(run_id: int, attempt_number: int, resume_step: int) -> int:
    """Flag what attempts before `attempt_number` reported for steps after `resume_step`.
    Idempotent (a second call finds nothing left to flag). Returns the records flagged."""
    past = {"run_id": run_id, "attempt__lt": attempt_number, "step__gt": resume_step}
    points = MetricPoint.objects.filter(**past, superseded=False).update(superseded=True)
    samples = RolloutSample.objects.filter(**past, superseded=False).update(superseded=True)
    records = IngestedRecord.objects.filter(**past, superseded=False).update(superseded=True)
    RunAlert.objects.filter(**past).delete()
    if records or points or samples:
        logger.info(
            "run %s attempt %s resumes after step %s: superseded %d records "
            "(%d metric points, %d samples) of earlier attempts",
            run_id,
            attempt_number,
            resume_step,
            records,
            points,
            samples,
        )
    return records

"""The startup timeline of a run's attempt: from Create to the first metric on a chart.

The phases are named once, in `trainer.reporting.startup`. The studio marks its own: the
queue entry (`created`), the queue pass that picked the run (`dispatched`), the claim
(studio.runs.launch), Ray's acceptance of the job (`submitted`) and the first metric row
stored from ingest. The trainer sends the rest as `startup` records (validated in
studio.telemetry.ingest.records). Every mark is kept on `RunAttempt.startup` the first
time it arrives: a repeat (a resubmission, a re-sent record) changes nothing.

Durations are read between phases in the order they happened, not their listed order: a
run that validates before training stores its first metric before its first rollout,
and a trainer started warm may have imported torch before its process "started".
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass

from django.db import connection

from studio.runs.models import Run, RunAttempt, RunStatus, RunStatusChange
from trainer.reporting.startup import PHASES, Phase


def record(attempt_id: int, phases: Mapping[str, float]) -> None:
    """Keep `phases` on the attempt, each only if it has no time yet (first wins), in one
    statement: the launcher and the trainer's ingest may write at the same moment."""
    if not phases:
        return
    with connection.cursor() as cursor:
        # jsonb `a || b` keeps b's value for a key both have: the stored one wins.
        cursor.execute(
            "UPDATE runs_runattempt SET startup = %s::jsonb || startup WHERE id = %s",
            [json.dumps(dict(phases)), attempt_id],
        )


def entered_queue_at(run_id: int, attempt_number: int) -> float:
    """When the attempt's run entered the queue: its creation for the first attempt, the
    resume that queued it again for a later one."""
    if attempt_number > 1:
        resumed = (
            RunStatusChange.objects.filter(run_id=run_id, to_status=RunStatus.QUEUED)
            .order_by("-at", "-id")
            .values_list("at", flat=True)
            .first()
        )
        if resumed is not None:
            return resumed.timestamp()
    return Run.objects.values_list("created_at", flat=True).get(pk=run_id).timestamp()


def claimed_phases(
    run_id: int, attempt_number: int, dispatched_at: float | None
) -> dict[str, float]:
    """The marks a claimed attempt starts with (claimed: now)."""
    phases = {"created": entered_queue_at(run_id, attempt_number)}
    if dispatched_at is not None:
        phases["dispatched"] = dispatched_at
    phases["claimed"] = time.time()
    return phases


def metric_stored(attempt: RunAttempt, reported_at: float) -> None:
    """The attempt's first metric row is stored (by the transaction now open): its emit
    time on the trainer's clock, and now."""
    if "first_metric_stored" in attempt.startup:
        return  # the usual case, known from the row the ingest request read: no write
    record(attempt.pk, {"first_metric_reported": reported_at, "first_metric_stored": time.time()})


# --- what the API shows -----------------------------------------------------------------
@dataclass(frozen=True)
class PhaseMark:
    name: Phase
    at: float | None  # unix seconds; None: not reached (yet)
    seconds: float | None  # since the phase reached just before it
    offset_s: float | None  # since `created`


@dataclass(frozen=True)
class Timeline:
    phases: list[PhaseMark]  # every phase: those reached in the order they happened, then the rest
    total_s: float | None  # Create -> first metric stored, once both are known


def timeline(marks: Mapping[str, object]) -> Timeline | None:
    """The attempt's phases with their durations; None when nothing was recorded (an
    attempt from before the timeline existed)."""
    reached = sorted(
        ((name, float(at)) for name in PHASES if isinstance(at := marks.get(name), int | float)),
        key=lambda item: item[1],  # a stable sort: a tie keeps the listed order
    )
    if not reached:
        return None
    start = marks.get("created")
    origin = float(start) if isinstance(start, int | float) else reached[0][1]
    shown: list[PhaseMark] = []
    previous: float | None = None
    for name, at in reached:
        seconds = None if previous is None else at - previous
        shown.append(PhaseMark(name, at, seconds, at - origin))
        previous = at
    done = {name for name, _ in reached}
    shown += [PhaseMark(name, None, None, None) for name in PHASES if name not in done]
    stored = marks.get("first_metric_stored")
    if isinstance(stored, int | float) and start is not None:
        return Timeline(shown, float(stored) - origin)
    return Timeline(shown, None)

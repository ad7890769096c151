"""The run state machine. Every status change goes through `transition`.

A change is a conditional UPDATE (`WHERE id = .. AND status = <expected>`), so two
callers that race (a user cancelling while a worker starts the run, two workers
redelivered the same task) can't both win: exactly one UPDATE matches the row,
the loser sees 0 rows changed and must not act. The history row is written in
the same transaction as the change.

Every change also revokes the run's ingest tokens when the run ends (so no path to a
terminal state can leave a trainer able to write), and is announced after commit as a
`run-status` event on the run's and the project's live streams.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from typing import Any

from django.db import transaction
from django.db.models import F
from django.db.models.functions import Coalesce
from django.utils import timezone

from studio.projects import notify
from studio.runs import run_files
from studio.runs.models import TERMINAL_STATUSES, Run, RunStatus, RunStatusChange
from studio.runs.tokens import revoke_ingest_tokens
from studio.telemetry.live.run_status import announce_status_change
from studio.telemetry.models import LogLine
from trainer.config import IgnoredKey, RenamedKey

logger = logging.getLogger(__name__)

S = RunStatus
ALLOWED: dict[RunStatus, frozenset[RunStatus]] = {
    S.QUEUED: frozenset({S.STARTING, S.CANCELLING, S.CANCELLED}),
    # STARTING -> FAILED: the launch itself failed (Ray refused the job, ...).
    S.STARTING: frozenset({S.RUNNING, S.FAILED, S.CANCELLING}),
    S.RUNNING: frozenset({S.SUCCEEDED, S.FAILED, S.CANCELLING}),
    # The job may end on its own (or be lost) before the stop request lands.
    S.CANCELLING: frozenset({S.CANCELLED, S.FAILED, S.SUCCEEDED}),
    S.SUCCEEDED: frozenset(),
    # Resume: back to the queue; the launcher makes a new attempt.
    S.FAILED: frozenset({S.QUEUED}),
    S.CANCELLED: frozenset({S.QUEUED}),
}

CANCELLABLE = frozenset({S.QUEUED, S.STARTING, S.RUNNING})
RESUMABLE = frozenset({S.FAILED, S.CANCELLED})


class TransitionRefused(Exception):
    """A user action that the run's current status does not allow (HTTP 409)."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status


def transition(
    run_id: int,
    expected: Collection[RunStatus],
    new: RunStatus,
    reason: str = "",
    actor: Any = None,
    **fields: Any,
) -> bool:
    """Move run `run_id` from one of `expected` to `new`; True if this call did it.

    False means the run was not in an expected status (someone else got there
    first); the caller must then not act on the change. `fields` are extra
    columns written in the same UPDATE (e.g. `last_error=...`).
    """
    illegal = sorted(str(s) for s in expected if new not in ALLOWED[RunStatus(s)])
    if illegal or not expected:
        allowed = "; ".join(
            f"{s} -> {', '.join(sorted(str(t) for t in to))}" for s, to in ALLOWED.items() if to
        )
        raise ValueError(
            f"no transition {', '.join(illegal) or '(nothing expected)'} -> {new}; "
            f"allowed: {allowed}"
        )
    now = timezone.now()
    values: dict[str, Any] = {"status": new, "status_reason": reason, "updated_at": now, **fields}
    if new == S.RUNNING:
        values["started_at"] = Coalesce(F("started_at"), now)  # first start is kept
    if new in TERMINAL_STATUSES:
        values["finished_at"] = now
    elif new == S.QUEUED:
        values["finished_at"] = None
        values["queue_passes"] = 0  # back in the queue: it waits its turn afresh
    with transaction.atomic():
        # One conditional update per expected status, so we know which one we left.
        for old in expected:
            if Run.objects.filter(pk=run_id, status=old).update(**values) == 1:
                change = RunStatusChange.objects.create(
                    run_id=run_id,
                    from_status=old,
                    to_status=new,
                    reason=reason,
                    actor=actor if actor is not None and actor.is_authenticated else None,
                    at=now,
                )
                if new in TERMINAL_STATUSES:
                    revoke_ingest_tokens(run_id)
                    # What it leaves on disk, for its project's storage (studio.runs.quota).
                    transaction.on_commit(lambda: run_files.measure(run_id))
                announce_status_change(change)
                if new in (S.SUCCEEDED, S.FAILED):
                    notify.run_finished(notice_subject(run_id), new, reason)
                logger.info("run %s: %s -> %s (%s)", run_id, old, new, reason)
                return True
    return False


def notice_subject(run_id: int) -> notify.RunSubject:
    """The run as a notification about it names it."""
    run = Run.objects.select_related("project").only("name", "project__slug").get(pk=run_id)
    return notify.RunSubject(run.pk, run.name, run.project_id, run.project.slug)


def record_creation(run: Run, reason: str, actor: Any = None) -> None:
    """The first history row of a new run (no `from` status)."""
    change = RunStatusChange.objects.create(
        run=run, from_status="", to_status=run.status, reason=reason, actor=actor, at=run.created_at
    )
    announce_status_change(change)


def record_config_notes(
    run: Run, ignored: Sequence[IgnoredKey], renamed: Sequence[RenamedKey] = ()
) -> None:
    """The verl overrides the run accepted with no effect, once each with the reason, and
    the moved keys it read under their old spelling, as the first lines of its log
    (attempt 0: before any attempt), where the trainer's own lines follow; the standalone
    CLI logs the same lines itself."""
    messages = [f"verl override {i.describe()}" for i in ignored] + [r.describe() for r in renamed]
    LogLine.objects.bulk_create(
        LogLine(
            run=run,
            attempt=0,
            seq=seq,
            level="WARNING",
            message=message,
            at=run.created_at,
        )
        for seq, message in enumerate(messages)
    )


def _current(run_id: int) -> RunStatus:
    return RunStatus(Run.objects.values_list("status", flat=True).get(pk=run_id))


# A user's action may race a worker's change; retry on the status we then see.
_ATTEMPTS = 3


def cancel(run_id: int, actor: Any = None, reason: str = "") -> tuple[RunStatus, bool]:
    """A queued run is cancelled at once; a starting or running one goes to CANCELLING
    (the worker stops its job and ends it CANCELLED). Returns (status, changed)."""
    for _ in range(_ATTEMPTS):
        status = _current(run_id)
        if status == S.CANCELLING:
            return status, False  # already asked; cancelling twice is a no-op
        if status not in CANCELLABLE:
            raise TransitionRefused(
                status,
                f"The run is already {status}; only queued, starting or running runs "
                "can be cancelled.",
            )
        new = S.CANCELLED if status == S.QUEUED else S.CANCELLING
        if transition(run_id, {status}, new, reason or "cancelled by user", actor):
            return new, True
    raise TransitionRefused(_current(run_id), "The run's status kept changing; try again.")


def resume(run_id: int, actor: Any = None, reason: str = "") -> RunStatus:
    """A failed or cancelled run goes back to the queue; its next attempt resumes
    from the latest checkpoint."""
    status = _current(run_id)
    if status not in RESUMABLE:
        raise TransitionRefused(
            status, f"The run is {status}; only failed or cancelled runs can be resumed."
        )
    if transition(run_id, {status}, S.QUEUED, reason or "resumed by user", actor):
        return S.QUEUED
    status = _current(run_id)
    raise TransitionRefused(status, f"The run became {status} meanwhile; it was not resumed.")

"""Bring runs in line with their Ray jobs, stop jobs nobody wants, start queued runs.

Ray's job states map to run states (reason in brackets):

    PENDING    the run stays STARTING          (waiting for Ray to place the job)
    RUNNING    STARTING -> RUNNING
    SUCCEEDED  -> SUCCEEDED                    (via RUNNING if it was still STARTING)
    FAILED     -> FAILED                       (the trainer's last error lines: last_error)
    STOPPED    CANCELLING -> CANCELLED; a job stopped from outside the studio goes
               STARTING/RUNNING -> CANCELLING -> CANCELLED
    (unknown)  Ray no longer has the job (its head restarted): -> FAILED, resumable

The trainer reports its own status through ingest as well. Both paths use conditional
transitions from the status they saw, so whichever lands first wins and terminal
states are final.

Every reading of Ray happens *after* the database snapshot it is compared with: an
attempt recorded as submitted before we listed Ray's jobs must be in that list, so a
missing job really is lost and not merely submitted a moment ago.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db.models import F
from django.utils import timezone

from studio.runs import lifecycle
from studio.runs.fair_share import plan_queue
from studio.runs.jobs import RayJob, RayJobs, RayUnavailable
from studio.runs.launch import fail_launch, parse_submission_id
from studio.runs.models import TERMINAL_STATUSES, Run, RunAttempt, RunStatus
from studio.runs.placement import record_placement
from studio.runs.queue import (
    Snapshot,
    free_for_runs,
    held_by_active_runs,
    queue_limits,
    queued_runs,
    running_jobs,
    save_snapshot,
)

logger = logging.getLogger(__name__)

S = RunStatus
ACTIVE = (S.STARTING, S.RUNNING, S.CANCELLING)
ERROR_TAIL_LINES = 40
ERROR_TAIL_CHARS = 8000
TRACEBACK_START = "Traceback (most recent call last):"

# From the run's status, the walk that reaches what Ray says happened.
Paths = dict[RunStatus, tuple[RunStatus, ...]]
SUCCEEDED_PATHS: Paths = {
    S.STARTING: (S.RUNNING, S.SUCCEEDED),
    S.RUNNING: (S.SUCCEEDED,),
    S.CANCELLING: (S.SUCCEEDED,),
}
FAILED_PATHS: Paths = {S.STARTING: (S.FAILED,), S.RUNNING: (S.FAILED,), S.CANCELLING: (S.FAILED,)}
STOPPED_PATHS: Paths = {
    S.STARTING: (S.CANCELLING, S.CANCELLED),
    S.RUNNING: (S.CANCELLING, S.CANCELLED),
    S.CANCELLING: (S.CANCELLED,),
}
LOST_PATHS: Paths = {S.STARTING: (S.FAILED,), S.RUNNING: (S.FAILED,), S.CANCELLING: (S.CANCELLED,)}


@dataclass
class ReconcileReport:
    """What a pass changed, and the runs the caller launches once the pass has released
    its lock: queued runs the queue starts (`to_launch`), and starting runs whose launch
    died before Ray confirmed the job (`to_resubmit`). The pass itself never submits a
    job: every submission goes through `launch.launch` (its failure points included), and
    a pass holding the reconcile lock never waits on Ray's job submission."""

    changes: list[str] = field(default_factory=list)
    to_launch: list[int] = field(default_factory=list)
    to_resubmit: list[int] = field(default_factory=list)
    dispatched_at: float = 0.0  # when the queue picked `to_launch` (unix seconds)

    def note(self, line: str) -> None:
        logger.info(line)
        self.changes.append(line)


def _status(run_id: int) -> RunStatus | None:
    value = Run.objects.filter(pk=run_id).values_list("status", flat=True).first()
    return RunStatus(value) if value is not None else None


def walk(run_id: int, paths: Paths, reason: str, **final_fields: object) -> bool:
    """Take the run along the path from its current status; True if it got there."""
    for _ in range(3):  # the status may change under us; re-read and retry
        current = _status(run_id)
        if current is None or current not in paths:
            return False
        path, source = paths[current], current
        for target in path:
            extra = final_fields if target == path[-1] else {}
            if not lifecycle.transition(run_id, {source}, target, reason, **extra):
                break
            source = target
        else:
            return True
    return False


# --- what a failed job says -------------------------------------------------------------
def trainer_error_lines(logs: str) -> str:
    """The last traceback in the job's output, or its last lines when there is none."""
    lines = logs.rstrip().splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(TRACEBACK_START)]
    tail = lines[starts[-1] :] if starts else lines[-20:]
    return "\n".join(tail[-ERROR_TAIL_LINES:])[-ERROR_TAIL_CHARS:]


def failure_text(job: RayJob, logs: str) -> str:
    lines = trainer_error_lines(logs)
    ray_line = job.message.strip().splitlines()[0] if job.message.strip() else "job failed"
    return f"{lines}\n\nRay: {ray_line}" if lines else f"Ray: {job.message.strip()}"


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("Ray:")]
    return (lines[-1] if lines else text)[:500]


# --- applying one job's state -----------------------------------------------------------
def _ms(value: int | None) -> datetime | None:
    return datetime.fromtimestamp(value / 1000, tz=UTC) if value else None


def record_job(attempt: RunAttempt, job: RayJob) -> None:
    """What Ray says about the attempt, on the attempt (whatever the run's status)."""
    updates: dict[str, object] = {}
    if attempt.ray_status != job.status:
        updates["ray_status"] = job.status
    if attempt.started_at is None and job.status != "PENDING" and job.start_time_ms:
        updates["started_at"] = _ms(job.start_time_ms)
    if job.terminal and attempt.finished_at is None:
        updates["finished_at"] = _ms(job.end_time_ms) or timezone.now()
    if job.terminal and not attempt.exit_message:
        updates["exit_message"] = job.message[:4000]
    if updates:
        RunAttempt.objects.filter(pk=attempt.pk).update(**updates)


def apply_job(run_id: int, attempt: RunAttempt, job: RayJob, jobs: RayJobs) -> None:
    """Move the run to where its (latest) attempt's Ray job is."""
    record_job(attempt, job)
    sid = attempt.submission_id
    if job.status == "RUNNING":
        lifecycle.transition(run_id, {S.STARTING}, S.RUNNING, f"the Ray job {sid} is running")
        record_placement(attempt, jobs)
    elif job.status == "SUCCEEDED":
        walk(run_id, SUCCEEDED_PATHS, f"the Ray job {sid} succeeded")
    elif job.status == "FAILED":
        if _status(run_id) not in FAILED_PATHS:
            return  # already ended (the trainer reported first): skip fetching the logs
        text = failure_text(job, jobs.logs(sid))
        walk(run_id, FAILED_PATHS, _last_line(text), last_error=text)
    elif job.status == "STOPPED":
        outside = _status(run_id) != S.CANCELLING
        why = "was stopped outside the studio" if outside else "stopped"
        walk(run_id, STOPPED_PATHS, f"the Ray job {sid} {why}")


def apply_lost(run_id: int, attempt: RunAttempt) -> None:
    """Ray had the job and no longer knows it: a restarted head forgets its jobs."""
    RunAttempt.objects.filter(pk=attempt.pk).update(
        ray_status="LOST", finished_at=attempt.finished_at or timezone.now()
    )
    message = (
        f"Ray no longer knows job {attempt.submission_id} (was the Ray head restarted?). "
        "Resume the run to continue from its latest checkpoint."
    )
    if _status(run_id) == S.CANCELLING:
        walk(run_id, LOST_PATHS, f"the Ray job {attempt.submission_id} is gone")
    else:
        walk(run_id, LOST_PATHS, message, last_error=message)


# --- reconcile --------------------------------------------------------------------------
def _latest_attempts(run_ids: list[int]) -> dict[int, RunAttempt]:
    latest: dict[int, RunAttempt] = {}
    for attempt in RunAttempt.objects.filter(run_id__in=run_ids).order_by("run_id", "number"):
        latest[attempt.run_id] = attempt  # ordered by number: the last one stays
    return latest


def settle_unconfirmed(
    run_id: int, status: RunStatus, attempt: RunAttempt, now: datetime, report: ReconcileReport
) -> str | None:
    """An attempt Ray does not have and that we never saw Ray accept."""
    if status == S.CANCELLING:
        walk(run_id, STOPPED_PATHS, "cancelled before Ray started the job")
        return f"run {run_id}: cancelled before its job started"
    if status != S.STARTING:
        apply_lost(run_id, attempt)
        return f"run {run_id}: job {attempt.submission_id} lost"
    age = (now - attempt.created_at).total_seconds()
    if age > settings.RLSTUDIO_LAUNCH_DEADLINE_S:
        last = attempt.exit_message or "no answer"
        fail_launch(
            run_id,
            attempt,
            f"Ray did not accept job {attempt.submission_id} within "
            f"{settings.RLSTUDIO_LAUNCH_DEADLINE_S:g} s (last error: {last}).",
        )
        return f"run {run_id}: launch deadline passed"
    if age > settings.RLSTUDIO_LAUNCH_GRACE_S:
        # The launching worker died before (or while) submitting, or its task is waiting
        # to retry an unreachable Ray: the same id again, by a launch task. (Submitting
        # here, past the launch task's failure points, once let the crash test's armed
        # points go unpassed: tests/runs/live/test_runs_on_ray.py, the chaos test.)
        report.to_resubmit.append(run_id)
        return f"run {run_id}: {attempt.submission_id} handed to a launch again"
    return None


def settle_active_runs(jobs: RayJobs, now: datetime, report: ReconcileReport) -> None:
    active = dict(Run.objects.filter(status__in=ACTIVE).values_list("id", "status"))
    latest = _latest_attempts(list(active))
    ended = list(  # attempts whose run moved on while Ray last said the job was live
        RunAttempt.objects.filter(ray_status__in=["PENDING", "RUNNING"]).exclude(
            pk__in=[a.pk for a in latest.values()]
        )
    )
    known = jobs.jobs(settings.RLSTUDIO_RAY_JOB_PREFIX)  # after the snapshot (see above)
    for run_id, status in active.items():
        attempt = latest.get(run_id)
        if attempt is None:
            continue  # claimed runs always have an attempt; nothing to compare
        job = known.get(attempt.submission_id)
        before = _status(run_id)
        if job is None and not attempt.ray_status:
            line = settle_unconfirmed(run_id, RunStatus(status), attempt, now, report)
            if line:
                report.note(line)
            continue
        if job is None:
            apply_lost(run_id, attempt)
        else:
            if status == S.CANCELLING and not job.terminal:
                jobs.stop(attempt.submission_id)  # again: the cancel task may have died
            apply_job(run_id, attempt, job, jobs)
        after = _status(run_id)
        if after != before:
            report.note(f"run {run_id}: {before} -> {after} (Ray: {job.status if job else 'lost'})")
    record_ended_attempts(ended, known)
    stop_orphans(known, now, jobs, report)


def record_ended_attempts(ended: list[RunAttempt], known: dict[str, RayJob]) -> None:
    """Finish the record of attempts whose run has moved on (the trainer reported its end
    first, a later attempt replaced it): their job's final state, or LOST."""
    for attempt in ended:
        job = known.get(attempt.submission_id)
        if job is None:
            RunAttempt.objects.filter(pk=attempt.pk).update(ray_status="LOST")
        elif job.status != attempt.ray_status:
            record_job(attempt, job)


def stop_orphans(
    known: dict[str, RayJob], now: datetime, jobs: RayJobs, report: ReconcileReport
) -> None:
    """Stop live jobs no run wants: an older attempt's, a cancelled or requeued run's, a
    deleted run's, or an ended run's that still runs long after its trainer said so."""
    live = {
        sid: ids
        for sid, job in known.items()
        if not job.terminal and (ids := parse_submission_id(sid))
    }
    if not live:
        return
    run_ids = [run_id for run_id, _ in live.values()]
    runs = {
        r["id"]: r for r in Run.objects.filter(pk__in=run_ids).values("id", "status", "finished_at")
    }
    latest = {run_id: a.number for run_id, a in _latest_attempts(run_ids).items()}
    grace = timedelta(seconds=settings.RLSTUDIO_ORPHAN_GRACE_S)
    for sid, (run_id, number) in live.items():
        run = runs.get(run_id)
        if run is None:
            why = "its run was deleted"
        elif number < latest.get(run_id, number):
            why = "a later attempt replaced it"
        elif run["status"] in (S.QUEUED, S.CANCELLED):
            why = f"its run is {run['status']}"
        elif run["status"] in TERMINAL_STATUSES and (run["finished_at"] or now) < now - grace:
            why = f"its run ended ({run['status']}) more than {grace.seconds} s ago"
        else:
            continue
        jobs.stop(sid)
        report.note(f"stopped Ray job {sid}: {why}")


def start_queued(jobs: RayJobs) -> list[int]:
    """The queued runs to start now (studio.runs.fair_share), in the order they start;
    counts a pass on each run passed over, and keeps the cluster view for the API (queue
    position, what a run waits for)."""
    queued = queued_runs()
    try:
        cluster = jobs.resources()
    except RayUnavailable as exc:
        save_snapshot(Snapshot({}, {}, time.time(), error=f"Ray is unreachable: {exc}"))
        raise
    save_snapshot(Snapshot(cluster.total, cluster.available, time.time()))
    free = free_for_runs(cluster, held_by_active_runs())
    plan = plan_queue(queued, free, cluster.total, running_jobs(), queue_limits())
    if plan.passed_over:  # one reconcile pass at a time (workers.runs), so counts are exact
        Run.objects.filter(pk__in=plan.passed_over, status=RunStatus.QUEUED).update(
            queue_passes=F("queue_passes") + 1
        )
    return plan.starts


def reconcile(jobs: RayJobs, now: datetime | None = None) -> ReconcileReport:
    """One pass: settle active runs against Ray, stop orphaned jobs, pick queued runs to
    launch (the caller launches them). Raises RayUnavailable when Ray can't be asked."""
    report = ReconcileReport()
    settle_active_runs(jobs, now or timezone.now(), report)
    report.to_launch = start_queued(jobs)
    report.dispatched_at = time.time()
    return report


# --- cancel -----------------------------------------------------------------------------
def finish_cancel(run_id: int, jobs: RayJobs, wait_s: float, poll_s: float = 0.2) -> RunStatus:
    """Stop a CANCELLING run's job and wait (up to `wait_s`) for Ray to confirm, then end
    the run where its job ended. A job that outlives the wait is left CANCELLING for
    `reconcile_runs`, which stops it again each pass."""
    status = _status(run_id)
    if status != S.CANCELLING:
        return status or S.CANCELLED
    attempt = RunAttempt.objects.filter(run_id=run_id).order_by("-number").first()
    if attempt is None:
        walk(run_id, STOPPED_PATHS, "cancelled before it was submitted")
        return _status(run_id) or S.CANCELLED
    sid = attempt.submission_id
    job = jobs.get(sid)
    if job is None:
        if attempt.ray_status:
            apply_lost(run_id, attempt)
        else:  # a launch still submitting stops the job itself once it sees this
            walk(run_id, STOPPED_PATHS, "cancelled before Ray started the job")
        return _status(run_id) or S.CANCELLED
    if not job.terminal:
        jobs.stop(sid)
    deadline = time.monotonic() + wait_s
    while job is not None and not job.terminal and time.monotonic() < deadline:
        time.sleep(poll_s)
        job = jobs.get(sid)
    if job is None:
        apply_lost(run_id, attempt)
    elif job.terminal:
        apply_job(run_id, attempt, job, jobs)
    return _status(run_id) or S.CANCELLED

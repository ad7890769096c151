"""Celery tasks that run training runs as Ray jobs. Thin: the logic is in
studio.runs.launch (claim + idempotent submit), studio.runs.reconcile (Ray state ->
run state, orphans, cancel) and studio.runs.queue (what starts next).

- `reconcile_runs()`: Celery beat, every RLSTUDIO_RECONCILE_INTERVAL_S, and the nudge of a
  create or resume; the backstop for every lost message, dead worker and missed status.
  It launches the runs its pass picks itself, at once (`launch_picked`).
- `launch_run(run_id)`: claim a queued run and submit its Ray job: the launches a pass
  could not make itself (Ray unreachable, its time budget spent), with retries.
- `cancel_run(run_id)`: stop a cancelling run's job and end the run when Ray confirms.

Only transient errors (Ray's dashboard unreachable or timing out) are retried; every
task is idempotent, bounded in time, and dropped after RLSTUDIO_MAX_TASK_DELIVERIES
deliveries that killed their worker.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time

import redis
from celery import Task
from django.conf import settings

from studio.runs import launch, reconcile
from studio.runs.jobs import RayJobs, RayUnavailable
from studio.runs.queue import Snapshot, save_snapshot
from workers.celery_app import app
from workers.delivery import over_delivery_cap
from workers.failpoints import failpoints_for
from workers.ray_jobs import RayJobsClient

logger = logging.getLogger(__name__)

RECONCILE_LOCK = "rlstudio:runs:reconcile-lock"
RECONCILE_LIMIT_S = 60
# Set while a launch message for the run waits in the queue or runs (see send_launches).
LAUNCH_PENDING = "rlstudio:runs:launch-pending:{run_id}"
# Of a pass's time limit, what its own launches may take (each submits to Ray, bounded by
# the Ray client's timeout); the rest go out as launch_run messages.
LAUNCH_INLINE_S = 20.0


@app.task(
    bind=True,
    name="workers.launch_run",
    ignore_result=True,
    soft_time_limit=45,
    time_limit=60,
    autoretry_for=(RayUnavailable,),
    max_retries=5,
    retry_backoff=2,
    retry_backoff_max=30,
    retry_jitter=True,
)
def launch_run(self: Task, run_id: int, dispatched_at: float | None = None) -> str:
    try:
        if over_delivery_cap(self):
            return "dropped"
        if not settings.RAY_ADDRESS:
            return "ray-not-configured"
        jobs = RayJobsClient.from_settings()
        return launch.launch(run_id, jobs, failpoints_for(run_id), dispatched_at)
    finally:
        # Done (or retrying later): the next pass may hand this run to a launch again.
        with contextlib.suppress(redis.RedisError):
            _redis().delete(LAUNCH_PENDING.format(run_id=run_id))


def _redis() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=5)


def send_launches(
    run_ids: list[int], expires_s: float | None = None, dispatched_at: float | None = None
) -> int:
    """Enqueue `launch_run` for each run without a launch message already pending.

    A run stays queued (or unconfirmed) until its launch runs, and a pass comes every
    few seconds: sending on every pass put a new message per run in the queue each time
    (260 launch messages for the chaos test's 10 runs, most of them expiring unread), and
    a worker behind on its queue spent its time on those. The mark lives as long as the
    message may (its expiry: a few passes by default), so a lost message is sent again
    by a later pass."""
    if expires_s is None:
        expires_s = max(10.0, settings.RLSTUDIO_RECONCILE_INTERVAL_S * 3)
    sent = 0
    client = _redis()
    for run_id in run_ids:
        try:
            fresh = client.set(
                LAUNCH_PENDING.format(run_id=run_id), "1", nx=True, ex=math.ceil(expires_s)
            )
        except redis.RedisError:
            fresh = True  # can't tell: send (a duplicate launch is harmless)
        if fresh:
            launch_run.apply_async((run_id, dispatched_at), expires=expires_s)
            sent += 1
    return sent


@app.task(
    bind=True,
    name="workers.cancel_run",
    ignore_result=True,
    soft_time_limit=settings.RLSTUDIO_CANCEL_WAIT_S + 20,
    time_limit=settings.RLSTUDIO_CANCEL_WAIT_S + 30,
    autoretry_for=(RayUnavailable,),
    max_retries=3,
    retry_backoff=2,
    retry_jitter=True,
)
def cancel_run(self: Task, run_id: int) -> str:
    if over_delivery_cap(self):
        return "dropped"
    if not settings.RAY_ADDRESS:
        return "ray-not-configured"
    jobs = RayJobsClient.from_settings()
    return str(reconcile.finish_cancel(run_id, jobs, settings.RLSTUDIO_CANCEL_WAIT_S))


@app.task(
    bind=True,
    name="workers.reconcile_runs",
    ignore_result=True,
    soft_time_limit=RECONCILE_LIMIT_S - 10,
    time_limit=RECONCILE_LIMIT_S,
)
def reconcile_runs(self: Task) -> str:
    if over_delivery_cap(self):
        return "dropped"
    if not settings.RAY_ADDRESS:
        save_snapshot(Snapshot({}, {}, 0.0, error="Ray is not configured (RAY_ADDRESS is empty)"))
        return "ray-not-configured"
    # One pass at a time: two overlapping passes would hand out the same free CPUs.
    client = _redis()
    lock = client.lock(RECONCILE_LOCK, timeout=RECONCILE_LIMIT_S, blocking=False)
    if not lock.acquire():
        return "busy"
    jobs = RayJobsClient.from_settings()
    try:
        report = reconcile.reconcile(jobs)
    except RayUnavailable as exc:
        logger.warning("reconcile_runs: Ray unavailable: %s", exc)
        return "ray-unavailable"
    finally:
        with contextlib.suppress(redis.exceptions.LockError):
            lock.release()  # LockError: it expired meanwhile; the next pass takes it
    launched = launch_picked(report, jobs)
    wanted = len(report.to_resubmit) + len(report.to_launch)
    return f"{len(report.changes)} changes, {launched} of {wanted} launched here"


def launch_picked(report: reconcile.ReconcileReport, jobs: RayJobs) -> int:
    """Launch the runs the pass picked, in its order, in this task; how many it launched.

    A `launch_run` message per run cost a trip through the broker, behind whatever the
    worker had queued (beat's next passes): 0.04 s of a run's start with an idle worker,
    0.13-0.28 s with a busy one (bench/first_chart.py, docs/benchmarks.md). The lock
    is released by now, as it was when those messages ran, so a pass that starts meanwhile
    may pick the same run again; its claim is conditional, so one launch wins (launch.py).
    Launches past LAUNCH_INLINE_S, and every one from the first that finds Ray
    unreachable, go out as `launch_run` messages, which retry with back-off.
    """
    deadline = time.monotonic() + LAUNCH_INLINE_S
    # Unconfirmed attempts first (their runs were picked by an earlier pass), then the
    # queue's picks in its order; every submission goes through launch.launch.
    picked = [*report.to_resubmit, *report.to_launch]
    for done, run_id in enumerate(picked):
        if time.monotonic() > deadline:
            send_launches(picked[done:], dispatched_at=report.dispatched_at)
            return done
        try:
            launch.launch(run_id, jobs, failpoints_for(run_id), report.dispatched_at)
        except RayUnavailable as exc:
            logger.warning("reconcile_runs: launching run %s: Ray unavailable: %s", run_id, exc)
            send_launches(picked[done:], dispatched_at=report.dispatched_at)
            return done
    return len(picked)

"""Celery tasks that run training runs as Ray jobs. Thin: the logic is in
studio.runs.launch (claim + idempotent submit), studio.runs.reconcile (Ray state ->
run state, orphans, cancel) and studio.runs.queue (what starts next).

- `launch_run(run_id)`: claim a queued run and submit its Ray job.
- `cancel_run(run_id)`: stop a cancelling run's job and end the run when Ray confirms.
- `reconcile_runs()`: Celery beat, every RLSTUDIO_RECONCILE_INTERVAL_S; the backstop
  for every lost message, dead worker and missed status.

Only transient errors (Ray's dashboard unreachable or timing out) are retried; every
task is idempotent, bounded in time, and dropped after RLSTUDIO_MAX_TASK_DELIVERIES
deliveries that killed their worker.
"""

from __future__ import annotations

import contextlib
import logging

import redis
from celery import Task
from django.conf import settings

from studio.runs import launch, reconcile
from studio.runs.jobs import RayUnavailable
from studio.runs.queue import Snapshot, save_snapshot
from workers.celery_app import app
from workers.delivery import over_delivery_cap
from workers.failpoints import failpoints_for
from workers.ray_jobs import RayJobsClient

logger = logging.getLogger(__name__)

RECONCILE_LOCK = "rlstudio:runs:reconcile-lock"
RECONCILE_LIMIT_S = 60


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
def launch_run(self: Task, run_id: int) -> str:
    if over_delivery_cap(self):
        return "dropped"
    if not settings.RAY_ADDRESS:
        return "ray-not-configured"
    return launch.launch(run_id, RayJobsClient.from_settings(), failpoints_for(run_id))


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
    client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=5)
    lock = client.lock(RECONCILE_LOCK, timeout=RECONCILE_LIMIT_S, blocking=False)
    if not lock.acquire():
        return "busy"
    try:
        report = reconcile.reconcile(RayJobsClient.from_settings())
    except RayUnavailable as exc:
        logger.warning("reconcile_runs: Ray unavailable: %s", exc)
        return "ray-unavailable"
    finally:
        with contextlib.suppress(redis.exceptions.LockError):
            lock.release()  # LockError: it expired meanwhile; the next pass takes it
    expires = max(10.0, settings.RLSTUDIO_RECONCILE_INTERVAL_S * 3)
    for run_id in report.to_launch:
        launch_run.apply_async((run_id,), expires=expires)
    return f"{len(report.changes)} changes, {len(report.to_launch)} to launch"

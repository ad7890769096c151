"""The run queue: what the fair-share policy (studio.runs.fair_share) is given, from the
database, Redis and the latest cluster view, and what the API shows of its plan.

Free resources are the smaller of two views, so neither can over-commit the cluster:
the cluster's total minus what our starting/running runs asked for (exact for our
runs, including jobs Ray has not placed yet), and what Ray reports free now (covers
anyone else using the cluster, our playground model servers included). Ray still
enforces every request itself (a job's entrypoint resources), so a wrong guess delays a
run and never oversubscribes.

Running jobs, counted against the caps, are starting, running and cancelling runs
(training runs and evaluations) and live playground model servers.

`reconcile_runs` stores the latest cluster view in Redis, so the API can show a queued
run's position and what it waits for without asking Ray on every request.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from dataclasses import asdict, dataclass

import redis
from django.conf import settings

from studio.playground.liveness import job_holders
from studio.runs.fair_share import (
    RESOURCE_NAMES,
    Limits,
    QueuedRun,
    QueueEntry,
    Resources,
    RunningJobs,
    plan_queue,
    request_of,
)
from studio.runs.jobs import ClusterResources
from studio.runs.models import Run, RunStatus

logger = logging.getLogger(__name__)

HOLDING = (RunStatus.STARTING, RunStatus.RUNNING, RunStatus.CANCELLING)
SNAPSHOT_KEY = "rlstudio:runs:cluster-snapshot"


def held_by_active_runs() -> Resources:
    """What our starting, running and cancelling runs asked for, together."""
    held = dict.fromkeys(RESOURCE_NAMES, 0.0)
    for resources in Run.objects.filter(status__in=HOLDING).values_list("resources", flat=True):
        for name, amount in request_of(resources).items():
            held[name] += amount
    return held


def free_for_runs(cluster: ClusterResources, held: Resources) -> Resources:
    return {
        name: max(
            0.0,
            min(
                cluster.total.get(name, 0.0) - held[name],
                cluster.available.get(name, 0.0),
            ),
        )
        for name in RESOURCE_NAMES
    }


def queue_limits() -> Limits:
    return Limits(
        per_project=int(settings.RLSTUDIO_PROJECT_MAX_RUNNING_JOBS),
        per_user=int(settings.RLSTUDIO_USER_MAX_RUNNING_JOBS),
        reserve_after=int(settings.RLSTUDIO_QUEUE_RESERVE_AFTER_PASSES),
    )


def running_jobs() -> RunningJobs:
    """Running jobs of each project and each user: runs (by their creator) and live
    playground model servers (by who started them)."""
    by_project: Counter[int] = Counter()
    by_user: Counter[int] = Counter()
    runs = Run.objects.filter(status__in=HOLDING).values_list("project_id", "created_by_id")
    for project_id, user_id in [*runs, *job_holders()]:
        by_project[project_id] += 1
        if user_id is not None:
            by_user[user_id] += 1
    return RunningJobs(by_project, by_user)


def queued_runs() -> list[QueuedRun]:
    """Every queued run, each project's in its order: priority (higher first), then age."""
    rows = (
        Run.objects.filter(status=RunStatus.QUEUED)
        .order_by("-priority", "created_at", "id")
        .values_list("id", "resources", "project_id", "created_by_id", "queue_passes", "created_at")
    )
    return [
        QueuedRun(run_id, request_of(res), project, user, passes, created.timestamp())
        for run_id, res, project, user, passes, created in rows
    ]


# --- the cluster view the API reads -----------------------------------------------------
@dataclass(frozen=True)
class Snapshot:
    total: Resources
    available: Resources  # as Ray reported it; our own holdings are subtracted when read
    at: float  # unix time of the reading
    error: str = ""  # why there is no fresh reading (Ray unreachable, not configured)


def _redis() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)


def save_snapshot(snapshot: Snapshot) -> None:
    try:
        ttl = max(60, int(settings.RLSTUDIO_RECONCILE_INTERVAL_S * 20))
        _redis().set(SNAPSHOT_KEY, json.dumps(asdict(snapshot)), ex=ttl)
    except redis.RedisError as exc:  # the queue still works; only the API's hint is stale
        logger.warning("could not store the cluster snapshot: %s", exc)


def load_snapshot() -> Snapshot | None:
    try:
        raw = _redis().get(SNAPSHOT_KEY)
    except redis.RedisError:
        return None
    if not raw:
        return None
    try:
        return Snapshot(**json.loads(raw))
    except (TypeError, ValueError):
        return None


def queue_view() -> dict[int, QueueEntry]:
    """Every queued run's place and what it waits for, from the latest cluster view."""
    queued = queued_runs()
    if not queued:
        return {}
    snapshot = load_snapshot()
    stale_after = max(30.0, settings.RLSTUDIO_RECONCILE_INTERVAL_S * 10)
    if snapshot is None or snapshot.error or time.time() - snapshot.at > stale_after:
        if snapshot is not None and snapshot.error:
            why = f"the cluster ({snapshot.error})"
        else:
            why = "the scheduler: no recent report from reconcile_runs (is Celery beat running?)"
        return {
            run.run_id: QueueEntry(run.run_id, position, "waits", why)
            for position, run in enumerate(queued, start=1)
        }
    cluster = ClusterResources(snapshot.total, snapshot.available)
    free = free_for_runs(cluster, held_by_active_runs())
    plan = plan_queue(queued, free, snapshot.total, running_jobs(), queue_limits())
    return {
        e.run_id: e
        if e.verdict != "starts"
        else QueueEntry(e.run_id, e.position, "starts", "its launch (starting now)")
        for e in plan.entries
    }

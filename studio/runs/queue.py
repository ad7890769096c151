"""The run queue: which queued runs start now, and what each of the others waits for.

Order is priority (higher first), then age. The queue is strict: a run that fits the
cluster but waits behind one that does not fit yet keeps waiting, so a large run is
never starved by a stream of small ones. A run asking for more than the whole cluster
has is skipped (it could only start if the cluster grows) and says so.

No project holds more than `RLSTUDIO_PROJECT_MAX_RUNNING_JOBS` jobs at once (starting,
running or cancelling): a run of a project at its cap waits, saying so, without holding
up the runs of other projects behind it, so one project can't take the whole cluster.

Free resources are the smaller of two views, so neither can over-commit the cluster:
the cluster's total minus what our starting/running runs asked for (exact for our
runs, including jobs Ray has not placed yet), and what Ray reports free now (covers
anyone else using the cluster). Ray still enforces every request itself (a job's
entrypoint resources), so a wrong guess delays a run and never oversubscribes.

`reconcile_runs` stores the latest cluster view in Redis, so the API can show a queued
run's position and what it waits for without asking Ray on every request.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any, Literal, NamedTuple

import redis
from django.conf import settings

from studio.runs.jobs import ClusterResources
from studio.runs.models import Run, RunStatus

logger = logging.getLogger(__name__)

RESOURCE_NAMES = ("cpus", "gpus", "memory_gb")
HOLDING = (RunStatus.STARTING, RunStatus.RUNNING, RunStatus.CANCELLING)
SNAPSHOT_KEY = "rlstudio:runs:cluster-snapshot"
EPSILON = 1e-9  # float sums of fractional CPUs
Resources = dict[str, float]
Verdict = Literal["starts", "waits", "too-large"]


def request_of(resources: dict[str, Any]) -> Resources:
    """A run's request with every resource present (0 when not asked for)."""
    return {name: float(resources.get(name) or 0.0) for name in RESOURCE_NAMES}


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


# --- what a resource request looks like to a person -------------------------------------
def _amount(name: str, value: float) -> str:
    if name == "cpus":
        return f"{value:g} CPU{'' if value == 1 else 's'}"
    if name == "gpus":
        return f"{value:g} GPU{'' if value == 1 else 's'}"
    return f"{value:g} GiB of memory"


def shortfall(request: Resources, have: Resources, have_word: str) -> str:
    """`"2 CPUs (1.0 free)"` for every resource that does not fit in `have`."""
    return ", ".join(
        f"{_amount(name, request[name])} ({have[name]:.1f} {have_word})"
        for name in RESOURCE_NAMES
        if request[name] > have.get(name, 0.0) + EPSILON
    )


# --- the plan ---------------------------------------------------------------------------
@dataclass(frozen=True)
class QueueEntry:
    run_id: int
    position: int  # 1 = next to start
    verdict: Verdict
    waiting_for: str  # empty when it starts now


class QueuedRun(NamedTuple):
    run_id: int
    request: Resources
    project_id: int | None = None


def project_cap() -> int:
    """Jobs one project may hold at once; 0 means no cap."""
    return int(settings.RLSTUDIO_PROJECT_MAX_RUNNING_JOBS)


def running_by_project() -> dict[int, int]:
    """Starting, running and cancelling runs of each project."""
    counts: dict[int, int] = {}
    for project_id in Run.objects.filter(status__in=HOLDING).values_list("project_id", flat=True):
        counts[project_id] = counts.get(project_id, 0) + 1
    return counts


def queued_runs() -> list[QueuedRun]:
    rows = (
        Run.objects.filter(status=RunStatus.QUEUED)
        .order_by("-priority", "created_at", "id")
        .values_list("id", "resources", "project_id")
    )
    return [QueuedRun(run_id, request_of(res), project) for run_id, res, project in rows]


def at_cap_message(cap: int, running: int) -> str:
    return f"its project's limit of {cap} running job{'' if cap == 1 else 's'} ({running} running)"


def plan_queue(
    queued: Iterable[QueuedRun],
    free: Resources,
    total: Resources,
    running: dict[int, int] | None = None,
    cap: int = 0,
) -> list[QueueEntry]:
    """Walk the queue in order, handing out `free`; the first run that does not fit
    blocks every run behind it. With a `cap`, a run whose project already holds `cap`
    jobs (`running`, by project) waits without blocking anyone."""
    remaining = dict(free)
    holding = dict(running or {})
    plan: list[QueueEntry] = []
    blocker: int | None = None
    for position, (run_id, request, project) in enumerate(queued, start=1):
        held = holding.get(project, 0) if project is not None else 0
        if shortfall(request, total, "in the cluster"):
            why = shortfall(request, total, "in the cluster")
            plan.append(QueueEntry(run_id, position, "too-large", why))
        elif cap and project is not None and held >= cap:
            plan.append(QueueEntry(run_id, position, "waits", at_cap_message(cap, held)))
        elif blocker is not None:
            why = f"run {blocker}, ahead of it in the queue, to start"
            plan.append(QueueEntry(run_id, position, "waits", why))
        elif shortfall(request, remaining, "free"):
            plan.append(
                QueueEntry(run_id, position, "waits", shortfall(request, remaining, "free"))
            )
            blocker = run_id
        else:
            for name in RESOURCE_NAMES:
                remaining[name] -= request[name]
            if project is not None:
                holding[project] = held + 1
            plan.append(QueueEntry(run_id, position, "starts", ""))
    return plan


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
            run_id: QueueEntry(run_id, position, "waits", why)
            for position, (run_id, _, _) in enumerate(queued, start=1)
        }
    cluster = ClusterResources(snapshot.total, snapshot.available)
    free = free_for_runs(cluster, held_by_active_runs())
    plan = plan_queue(queued, free, snapshot.total, running_by_project(), project_cap())
    return {
        e.run_id: e
        if e.verdict != "starts"
        else QueueEntry(e.run_id, e.position, "starts", "its launch (starting now)")
        for e in plan
    }

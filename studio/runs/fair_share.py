"""Who starts next: the run queue's fair-share policy, as one pure function.

`plan_queue` is given the queued runs (each project's in its own order: priority, then
age), the running jobs of every project and user, what is free, and the limits; it says
which runs start now and what each of the others waits for. No database, no Ray: the
callers (studio.runs.queue, studio.runs.reconcile) read those and act on the plan.

- **Within a project** runs start in order. A project's run that does not fit yet keeps
  the project's later runs waiting (priority only orders a project's own runs).
- **Across projects** the turn goes to the run whose user, then project, holds the fewest
  running jobs, then to the oldest. A run that does not fit does not hold up other
  projects' runs that do.
- **No starvation.** A run that waited for room while other runs took what it lacks is
  *passed over*; the caller counts that per run (`Run.queue_passes`). Once passed over
  `reserve_after` times it *reserves*: it takes its turn first and holds what is free, up
  to its request, until it fits, so smaller runs stop jumping ahead of it.
- **Caps.** A project holds at most `per_project` jobs and a user at most `per_user`
  (runs, evaluations and playground model servers alike; 0: no cap). A run at a cap
  waits without holding up anyone.
- **Privacy.** What a run waits for names only its own project's runs.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

RESOURCE_NAMES = ("cpus", "gpus", "memory_gb")
EPSILON = 1e-9  # float sums of fractional CPUs
Resources = dict[str, float]
Verdict = Literal["starts", "waits", "too-large"]


def request_of(resources: dict[str, Any]) -> Resources:
    """A run's request with every resource present (0 when not asked for)."""
    return {name: float(resources.get(name) or 0.0) for name in RESOURCE_NAMES}


def _amount(name: str, value: float) -> str:
    if name == "cpus":
        return f"{value:g} CPU{'' if value == 1 else 's'}"
    if name == "gpus":
        return f"{value:g} GPU{'' if value == 1 else 's'}"
    return f"{value:g} GiB of memory"


def lacking(request: Resources, have: Resources) -> set[str]:
    return {name for name in RESOURCE_NAMES if request[name] > have.get(name, 0.0) + EPSILON}


def shortfall(request: Resources, have: Resources, have_word: str) -> str:
    """`"2 CPUs (1.0 free)"` for every resource that does not fit in `have`."""
    short = lacking(request, have)
    return ", ".join(
        f"{_amount(name, request[name])} ({have.get(name, 0.0):.1f} {have_word})"
        for name in RESOURCE_NAMES
        if name in short
    )


def _jobs(count: int) -> str:
    return f"{count} running job{'' if count == 1 else 's'}"


def project_limit(cap: int, running: int) -> str:
    return f"its project's limit of {_jobs(cap)} ({running} running)"


def user_limit(cap: int, whose: str = "its creator's") -> str:
    # No count for a run's creator: it covers projects the reader may not belong to.
    return f"{whose} limit of {_jobs(cap)}"


# --- the inputs and the plan ------------------------------------------------------------
@dataclass(frozen=True)
class QueuedRun:
    run_id: int
    request: Resources
    project_id: int = 0
    user_id: int = 0
    passes: int = 0  # dispatches it was passed over (Run.queue_passes)
    queued_at: float = 0.0  # for the turn between projects: older first


@dataclass(frozen=True)
class RunningJobs:
    """Starting, running or cancelling runs and live playground model servers."""

    by_project: Mapping[int, int] = field(default_factory=dict)
    by_user: Mapping[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Limits:
    per_project: int = 0  # 0: no cap
    per_user: int = 0
    reserve_after: int = 3  # passes before a run reserves what it needs


@dataclass(frozen=True)
class QueueEntry:
    run_id: int
    position: int  # 1 = next to start
    verdict: Verdict
    waiting_for: str  # empty when it starts now


@dataclass(frozen=True)
class QueuePlan:
    entries: list[QueueEntry]
    passed_over: list[int]  # runs that waited for room while others took it

    @property
    def starts(self) -> list[int]:
        return [e.run_id for e in self.entries if e.verdict == "starts"]


def cap_reached(
    limits: Limits, running: RunningJobs, project_id: int, user_id: int, whose: str
) -> str:
    """Which cap one more job of this project and user would exceed; empty if none."""
    in_project = running.by_project.get(project_id, 0)
    if limits.per_project and in_project >= limits.per_project:
        return project_limit(limits.per_project, in_project)
    if limits.per_user and running.by_user.get(user_id, 0) >= limits.per_user:
        return user_limit(limits.per_user, whose)
    return ""


# --- the plan ---------------------------------------------------------------------------
def _project_lines(
    queued: Iterable[QueuedRun], total: Resources
) -> tuple[dict[int, deque[tuple[int, QueuedRun]]], list[QueueEntry]]:
    """Each project's runs in their order (with their place in the whole queue, the last
    tie-break), and the runs larger than the whole cluster, which could never start."""
    lines: dict[int, deque[tuple[int, QueuedRun]]] = {}
    too_large: list[QueueEntry] = []
    for index, run in enumerate(queued):
        if lacking(run.request, total):
            why = shortfall(run.request, total, "in the cluster")
            too_large.append(QueueEntry(run.run_id, 0, "too-large", why))
        else:
            lines.setdefault(run.project_id, deque()).append((index, run))
    return lines, too_large


def plan_queue(
    queued: Iterable[QueuedRun],
    free: Resources,
    total: Resources,
    running: RunningJobs | None = None,
    limits: Limits | None = None,
) -> QueuePlan:
    """Take turns between the projects' queues, handing out `free`: each turn, the
    project whose next run comes first (reserving, then fewest jobs of its user, then of
    its project, then oldest) has that run start, wait for a cap, or wait for room."""
    limits = limits or Limits()
    running = running or RunningJobs()
    by_project, by_user = Counter(running.by_project), Counter(running.by_user)
    counts = RunningJobs(by_project, by_user)  # the same counters, as runs start
    remaining = dict(free)
    held = dict.fromkeys(RESOURCE_NAMES, 0.0)  # taken out of `remaining` by reservations
    lines, too_large = _project_lines(queued, total)

    def turn(project_id: int) -> tuple[bool, int, int, float, int]:
        index, run = lines[project_id][0]
        reserving = run.passes >= limits.reserve_after
        return (not reserving, by_user[run.user_id], by_project[project_id], run.queued_at, index)

    decided: list[tuple[int, Verdict, str]] = []
    blocked_by: dict[int, int] = {}  # project -> its run that waits for room
    short: list[tuple[int, set[str]]] = []  # runs waiting for room, and what they lack
    taken: set[str] = set()  # what the runs starting now asked for
    while lines:
        project_id = min(lines, key=turn)
        _, run = lines[project_id].popleft()
        if not lines[project_id]:
            del lines[project_id]
        cap = cap_reached(limits, counts, project_id, run.user_id, "its creator's")
        if project_id in blocked_by:
            why = f"run {blocked_by[project_id]}, ahead of it in its project's queue, to start"
            decided.append((run.run_id, "waits", why))
        elif cap:
            decided.append((run.run_id, "waits", cap))
        elif not lacking(run.request, remaining):
            for name in RESOURCE_NAMES:
                remaining[name] -= run.request[name]
            taken |= {name for name in RESOURCE_NAMES if run.request[name] > 0}
            by_project[project_id] += 1
            by_user[run.user_id] += 1
            decided.append((run.run_id, "starts", ""))
        else:
            why = shortfall(run.request, remaining, "free")
            short.append((run.run_id, lacking(run.request, remaining)))
            blocked_by[project_id] = run.run_id
            if run.passes >= limits.reserve_after:
                why += "; what frees up is held for it until it fits"
                for name in RESOURCE_NAMES:  # hold what there is, up to its request
                    hold = min(remaining[name], run.request[name])
                    remaining[name] -= hold
                    held[name] += hold
            elif not lacking(run.request, {n: remaining[n] + held[n] for n in RESOURCE_NAMES}):
                why += "; what is free is held for a run that has waited longer"
            decided.append((run.run_id, "waits", why))
    # Positions: the runs starting now first, then the others in turn, then the too large.
    ordered = [d for d in decided if d[1] == "starts"] + [d for d in decided if d[1] != "starts"]
    entries = [
        QueueEntry(run_id, position, verdict, why)
        for position, (run_id, verdict, why) in enumerate(ordered, start=1)
    ]
    entries += [
        QueueEntry(e.run_id, position, e.verdict, e.waiting_for)
        for position, e in enumerate(too_large, start=len(entries) + 1)
    ]
    passed_over = [run_id for run_id, lacks in short if lacks & taken]
    return QueuePlan(entries, passed_over)

"""Running the suite on several pytest-xdist workers (`make test` uses two).

Loaded with `-p tests.suite_workers`, so this module runs before Django reads its
settings: each worker then gets its own Redis database and its own media, checkpoint,
data-cache and trainer working folders (pytest-django already gives each its own Postgres
database). Without that, one worker's Celery worker would take the other's tasks, and
tests that flush Redis or write `media/<project id>/...` or a run's spool would clobber
each other's (both databases number their rows from 1).

It also gives every test a node id of its own (xdist schedules by node id), and says
which tests must share a worker (`--dist loadgroup`): every test of one
module (module-scoped fixtures such as a Ray head start once), the whole browser
package (one live studio for all of it), and the whole rewards package.

And it hands the groups out longest first (`scheduled`), by the seconds each took in a
recorded run (tests/group_seconds.json, `python -m tests.suite_workers record` after a
run): xdist's own order, most tests first, left the one-test end-to-end modules (a
sweep, `rlstudio up`, an outage) to the end, where one worker ran them for 3 minutes
while the other idled.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from studio.platform.suite_services import LOCAL_REDIS

REPO_ROOT = Path(__file__).resolve().parent.parent
TESTS = REPO_ROOT / "tests"
# Redis's default number of logical databases.
REDIS_DATABASES = 16
# Test folders whose modules run on one worker: the browser tests share one live studio,
# and tests/runs/live one live stack; the reward tests check that no sandbox process is
# left by counting them machine-wide (a process of an attack may rename itself, never
# change its uid), so a module closing pools mid-call on the other worker would be
# counted as their leftover.
SHARED_PACKAGES = ("browser", "rewards", "runs/live")


def worker_index(worker_id: str) -> int:
    """`gw3` -> 3."""
    return int(worker_id.removeprefix("gw"))


def redis_url_for_worker(url: str, index: int) -> str:
    """The same server, another database: counting down from the suite's own (15 by
    default), so worker 0 keeps the database a single-process run uses."""
    parts = urlsplit(url)
    base = int(parts.path.strip("/") or 0)
    database = base - index if base >= index else base + index
    if not 0 <= database < REDIS_DATABASES:
        raise pytest.UsageError(f"no Redis database left for xdist worker {index} of {url}")
    return urlunsplit(parts._replace(path=f"/{database}"))


def _isolate_this_worker() -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return
    index = worker_index(worker)
    os.environ["REDIS_URL"] = redis_url_for_worker(os.environ.get("REDIS_URL", LOCAL_REDIS), index)
    # One math thread per worker (and for what it starts): two workers each spinning two
    # OpenMP threads on two cores stall at every barrier (a training test: 164 s, not 38 s).
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")
    folder = REPO_ROOT / "var" / "test-workers" / worker
    for name, sub in (
        ("MEDIA_ROOT", "media"),
        ("RLSTUDIO_CHECKPOINT_ROOT", "checkpoints"),
        ("RLSTUDIO_DATA_CACHE", "data-cache"),
        ("RLSTUDIO_TRAINER_WORKDIR", "trainer"),  # the trainers' spools: var/spool/run-<id>-...
    ):
        (folder / sub).mkdir(parents=True, exist_ok=True)
        os.environ[name] = str(folder / sub)


_isolate_this_worker()


def xdist_group_of(path: Path) -> str:
    relative = path.relative_to(TESTS).as_posix()
    for package in SHARED_PACKAGES:
        if relative.startswith(f"{package}/"):
            return package
    return relative


def give_unique_nodeids(items: list[pytest.Item]) -> None:
    """schemathesis makes one item per API operation, all with the test function's node
    id (the operation is only in the name). xdist tells workers what to run by node id, so
    it would run one of them and silently drop the rest: give each its name as its id."""
    counts = Counter(item.nodeid for item in items)
    for item in items:
        if counts[item.nodeid] > 1 and item.parent is not None:
            item._nodeid = f"{item.parent.nodeid}::{item.name}"  # as xdist itself sets it
            if item.nodeid != item._nodeid:  # a pytest that ignores it: groups would be too
                raise pytest.UsageError(
                    "this pytest ignores Item._nodeid, which pytest-xdist's groups and this "
                    "plugin rely on (pytest 9 does): install pytest<9"
                )


# What each group's tests took, summed, in a recorded run of the whole suite.
GROUP_SECONDS = TESTS / "group_seconds.json"
# The session fixture that waits for the demo models (tests.assets), which `make test`
# builds beside the first minutes of pytest: groups that need it go after the others,
# so both workers have work while it builds.
DEMO_FIXTURE = "demo_assets"


def recorded_seconds() -> dict[str, float]:
    try:
        return {str(k): float(v) for k, v in json.loads(GROUP_SECONDS.read_text()).items()}
    except (OSError, ValueError):
        return {}


def scheduled(items: list[pytest.Item], seconds: dict[str, float]) -> list[pytest.Item]:
    """`items` with their groups in the order to hand them out: those that don't wait for
    the demo models first, then those that do, each part longest first (a group not yet
    recorded counts as the median group). Tests keep their order within a group."""
    groups: dict[str, list[pytest.Item]] = {}
    for item in items:
        groups.setdefault(group_of(item), []).append(item)
    typical = statistics.median(seconds.values()) if seconds else 0.0

    def order(group: str) -> tuple[bool, float]:
        waits = any(DEMO_FIXTURE in getattr(item, "fixturenames", ()) for item in groups[group])
        return waits, -seconds.get(group, typical)

    return [item for group in sorted(groups, key=order) for item in groups[group]]


def group_of(item: pytest.Item) -> str:
    marker = item.get_closest_marker("xdist_group")
    return str(marker.args[0]) if marker and marker.args else item.nodeid.split("::")[0]


def pytest_configure(config: pytest.Config) -> None:
    # xdist would sort the groups again, most tests first: keep the order `scheduled` set.
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    give_unique_nodeids(items)
    for item in items:
        if item.path.is_relative_to(TESTS):
            item.add_marker(pytest.mark.xdist_group(xdist_group_of(item.path)))
    items[:] = scheduled(items, recorded_seconds())


def timeline_path() -> Path | None:
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    return REPO_ROOT / "var" / "test-workers" / worker / "timeline.tsv" if worker else None


SESSION_START = "<session start>"


def pytest_sessionstart(session: pytest.Session) -> None:
    path = timeline_path()
    if path is not None:
        path.write_text(f"{time.time():.1f}\t{SESSION_START}\n")


def pytest_runtest_logfinish(nodeid: str, location: tuple[str, int | None, str]) -> None:
    """Each worker's finished tests, with the time each ended, in
    `var/test-workers/<worker>/timeline.tsv`: what the suite's last minutes ran on which
    worker (a group scheduled late keeps one worker busy while the other idles)."""
    path = timeline_path()
    if path is not None:
        with path.open("a") as timeline:
            timeline.write(f"{time.time():.1f}\t{nodeid}\n")


def group_seconds(timelines: Iterable[Path]) -> dict[str, float]:
    """Each group's seconds in the workers' timelines: a test took from the end of the
    one before it on its worker (or the worker's start) to its own end."""
    seconds: dict[str, float] = {}
    for timeline in timelines:
        previous: float | None = None
        for line in timeline.read_text().splitlines():
            at, nodeid = line.split("\t", 1)
            if previous is not None and nodeid != SESSION_START:
                group = nodeid.rsplit("@", 1)[-1]
                seconds[group] = seconds.get(group, 0.0) + float(at) - previous
            previous = float(at)
    return seconds


def record(timelines: list[Path]) -> None:
    seconds = group_seconds(timelines)
    if not seconds:
        raise SystemExit("no timeline: run the suite on workers first (make test)")
    rounded = {group: round(s) for group, s in sorted(seconds.items())}
    GROUP_SECONDS.write_text(json.dumps(rounded, indent=1) + "\n")
    print(f"{GROUP_SECONDS}: {len(rounded)} groups, {sum(rounded.values())} s")


if __name__ == "__main__":
    if sys.argv[1:] != ["record"]:
        raise SystemExit("usage: python -m tests.suite_workers record")
    record(sorted((REPO_ROOT / "var" / "test-workers").glob("*/timeline.tsv")))

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
"""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from studio.platform.suite_services import LOCAL_REDIS

REPO_ROOT = Path(__file__).resolve().parent.parent
TESTS = REPO_ROOT / "tests"
# Redis's default number of logical databases.
REDIS_DATABASES = 16
# Test folders whose modules run on one worker: the browser tests share one live studio;
# the reward tests check that no sandbox process is left by counting them machine-wide
# (a process of an attack may rename itself, never change its uid), so a module closing
# pools mid-call on the other worker would be counted as their leftover.
SHARED_PACKAGES = ("browser", "rewards")


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
    relative = path.relative_to(TESTS)
    if relative.parts[0] in SHARED_PACKAGES:
        return relative.parts[0]
    return relative.as_posix()


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


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    give_unique_nodeids(items)
    for item in items:
        if item.path.is_relative_to(TESTS):
            item.add_marker(pytest.mark.xdist_group(xdist_group_of(item.path)))


def timeline_path() -> Path | None:
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    return REPO_ROOT / "var" / "test-workers" / worker / "timeline.tsv" if worker else None


def pytest_sessionstart(session: pytest.Session) -> None:
    path = timeline_path()
    if path is not None:
        path.unlink(missing_ok=True)


def pytest_runtest_logfinish(nodeid: str, location: tuple[str, int | None, str]) -> None:
    """Each worker's finished tests, with the time each ended, in
    `var/test-workers/<worker>/timeline.tsv`: what the suite's last minutes ran on which
    worker (a group scheduled late keeps one worker busy while the other idles)."""
    path = timeline_path()
    if path is not None:
        with path.open("a") as timeline:
            timeline.write(f"{time.time():.1f}\t{nodeid}\n")

"""The plugin that runs the suite on several xdist workers (tests/suite_workers.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest

from tests.suite_workers import (
    SESSION_START,
    TESTS,
    group_seconds,
    redis_url_for_worker,
    scheduled,
    xdist_group_of,
)


def test_each_worker_gets_its_own_redis_database_on_the_same_server() -> None:
    url = "redis://127.0.0.1:6379/15"
    assert redis_url_for_worker(url, 0) == url
    assert redis_url_for_worker(url, 1) == "redis://127.0.0.1:6379/14"
    assert redis_url_for_worker("redis://:pw@cache:6380/0", 2) == "redis://:pw@cache:6380/2"
    with pytest.raises(pytest.UsageError):
        redis_url_for_worker("redis://127.0.0.1:6379/8", 20)


def test_a_module_is_a_group_and_the_shared_stack_packages_are_one_each() -> None:
    assert xdist_group_of(TESTS / "runs" / "test_queue.py") == "runs/test_queue.py"
    assert xdist_group_of(TESTS / "runs" / "live" / "test_runs_on_ray.py") == "runs/live"
    assert xdist_group_of(TESTS / "runs" / "live" / "conftest.py") == "runs/live"
    assert xdist_group_of(TESTS / "browser" / "test_harness.py") == "browser"
    assert xdist_group_of(TESTS / "browser" / "test_reward_editor.py") == "browser"
    assert xdist_group_of(TESTS / "rewards" / "test_sandbox_close.py") == "rewards"


@dataclass
class Collected:
    """What `scheduled` reads of a collected test: its group and the fixtures it needs."""

    nodeid: str
    group: str
    fixturenames: list[str] = field(default_factory=list)

    def get_closest_marker(self, name: str) -> Any:
        return pytest.mark.xdist_group(self.group).mark if name == "xdist_group" else None


def test_groups_go_longest_first_and_those_waiting_for_the_demo_models_last() -> None:
    items = [
        Collected("a.py::one", "a.py"),
        Collected("trains.py::one", "trains.py", ["demo_assets"]),
        Collected("sweep.py::one", "sweep.py"),
        Collected("a.py::two", "a.py"),
        Collected("new.py::one", "new.py"),  # not recorded: counts as the median
        Collected("trains_more.py::one", "trains_more.py", ["tmp_path", "demo_assets"]),
    ]
    seconds = {"a.py": 5.0, "trains.py": 30.0, "trains_more.py": 90.0, "sweep.py": 100.0}

    order = scheduled(cast(list[pytest.Item], items), seconds)

    assert [item.nodeid for item in order] == [
        "sweep.py::one",
        "new.py::one",  # the median of 5, 30, 90 and 100: 60
        "a.py::one",
        "a.py::two",
        "trains_more.py::one",
        "trains.py::one",
    ]


def test_a_groups_seconds_add_up_from_the_end_of_the_test_before_on_its_worker(
    tmp_path: Path,
) -> None:
    timeline = tmp_path / "timeline.tsv"
    timeline.write_text(
        f"100.0\t{SESSION_START}\n"
        "130.0\ttests/a.py::one@a.py\n"
        "131.5\ttests/a.py::two@a.py\n"
        "200.0\ttests/browser/test_x.py::one@browser\n"
    )
    assert group_seconds([timeline]) == {"a.py": 31.5, "browser": 68.5}

"""The plugin that runs the suite on several xdist workers (tests/suite_workers.py)."""

from __future__ import annotations

import json

import pytest

from tests.suite_workers import (
    SECONDS_FILE,
    TESTS,
    redis_url_for_worker,
    seconds_by_group,
    xdist_group_of,
)


def test_each_worker_gets_its_own_redis_database_on_the_same_server() -> None:
    url = "redis://127.0.0.1:6379/15"
    assert redis_url_for_worker(url, 0) == url
    assert redis_url_for_worker(url, 1) == "redis://127.0.0.1:6379/14"
    assert redis_url_for_worker("redis://:pw@cache:6380/0", 2) == "redis://:pw@cache:6380/2"
    with pytest.raises(pytest.UsageError):
        redis_url_for_worker("redis://127.0.0.1:6379/8", 20)


def test_a_module_is_a_group_and_the_browser_package_is_one() -> None:
    assert xdist_group_of(TESTS / "runs" / "test_queue.py") == "runs/test_queue.py"
    assert xdist_group_of(TESTS / "browser" / "test_harness.py") == "browser"
    assert xdist_group_of(TESTS / "browser" / "test_reward_editor.py") == "browser"


def test_group_seconds_are_read_from_a_junit_report_of_an_xdist_run(tmp_path) -> None:
    report = tmp_path / "report.xml"
    report.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.a" name="test_x@runs/test_a.py" time="2.5"/>'
        '<testcase classname="tests.a" name="test_y@runs/test_a.py" time="1.0"/>'
        '<testcase classname="tests.browser.b" name="test_z@browser" time="40.2"/>'
        '<testcase classname="tests.c" name="test_quick@c/test_c.py" time="0.1"/>'
        '<testcase classname="" name="tests.skipped_module" time="0"/>'
        "</testsuite></testsuites>"
    )
    seconds = seconds_by_group(report)
    assert seconds == {"browser": 40, "runs/test_a.py": 4}  # under 3 s: left out
    assert list(seconds) == ["browser", "runs/test_a.py"]  # longest first


def test_every_group_in_the_seconds_file_still_exists() -> None:
    """A renamed or deleted module would keep its old figure and order nothing."""
    groups = {xdist_group_of(path) for path in TESTS.rglob("test_*.py")}
    stale = set(json.loads(SECONDS_FILE.read_text())) - groups
    assert not stale, f"tests/suite_seconds.json names groups that no longer exist: {stale}"

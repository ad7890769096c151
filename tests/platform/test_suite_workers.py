"""The plugin that runs the suite on several xdist workers (tests/suite_workers.py)."""

from __future__ import annotations

import pytest

from tests.suite_workers import TESTS, redis_url_for_worker, xdist_group_of


def test_each_worker_gets_its_own_redis_database_on_the_same_server() -> None:
    url = "redis://127.0.0.1:6379/15"
    assert redis_url_for_worker(url, 0) == url
    assert redis_url_for_worker(url, 1) == "redis://127.0.0.1:6379/14"
    assert redis_url_for_worker("redis://:pw@cache:6380/0", 2) == "redis://:pw@cache:6380/2"
    with pytest.raises(pytest.UsageError):
        redis_url_for_worker("redis://127.0.0.1:6379/8", 20)


def test_a_module_is_a_group_and_the_browser_and_rewards_packages_are_one_each() -> None:
    assert xdist_group_of(TESTS / "runs" / "test_queue.py") == "runs/test_queue.py"
    assert xdist_group_of(TESTS / "browser" / "test_harness.py") == "browser"
    assert xdist_group_of(TESTS / "browser" / "test_reward_editor.py") == "browser"
    assert xdist_group_of(TESTS / "rewards" / "test_sandbox_close.py") == "rewards"

"""`rlstudio up` end to end: starts the whole stack, stops it with nothing left behind,
and keeps its data across restarts."""

from __future__ import annotations

import time

import pytest

from tests.platform.studio_process import STOP_LIMIT_S, Studio, assert_stops_cleanly, survivors

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def test_up_runs_the_studio_stops_without_orphans_keeps_data_and_dies_with_its_children(
    var_dir,
):
    studio = Studio(var_dir)
    try:
        first = studio.start()
        # Started once the studio is up, detached: it must still stop with `up`.
        studio.wait_for_warm_runtime()
        identity = studio.query("SELECT date_joined FROM auth_user")
        assert studio.query("SELECT username, is_superuser FROM auth_user") == [("admin", True)]
        assert (var_dir / "demo" / "grpo-tiny-arith.yaml").exists()
        assert_stops_cleanly(studio)
        first_log = studio.log()
        assert "with password" in first_log
        assert "first start took" in first_log

        later = studio.start()
        second_log = studio.log()[len(first_log) :]
        assert studio.query("SELECT date_joined FROM auth_user") == identity
        assert studio.query("SELECT username FROM auth_user") == [("admin",)]
        assert "with password" not in second_log, "the admin password is printed only once"
        assert "first start" not in second_log
        assert_stops_cleanly(studio)
        print(f"rlstudio up: first start {first:.1f} s, later start {later:.1f} s")

        # SIGKILL gives `up` no chance to clean up: the parent-death signal must.
        studio.start()
        studio.wait_for_warm_runtime()
        recorded = studio.descendants()
        assert studio.proc is not None
        studio.proc.kill()
        studio.proc.wait()
        deadline = time.monotonic() + STOP_LIMIT_S
        while survivors(recorded) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert survivors(recorded) == []
    finally:
        studio.kill()

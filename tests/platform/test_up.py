"""`rlstudio up` end to end: starts the whole stack, stops it with nothing left behind,
and keeps its data across restarts."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import time
from pathlib import Path

import psutil
import psycopg
import pytest
import requests

from studio.platform.services import ray_temp_dir
from tests.platform.conftest import (
    RLSTUDIO,
    free_ports,
    kill_processes_mentioning,
    processes_mentioning,
    studio_env,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

FIRST_START_TIMEOUT_S = 300  # generous: initdb and migrate on a loaded 2-core machine
STOP_LIMIT_S = 15 + 3  # the promise is 15 s; 3 s of margin for a loaded 2-core machine


class Studio:
    def __init__(self, var: Path) -> None:
        self.var = var
        taken: set[int] = set()
        self.web, self.postgres, self.redis, self.dashboard = (
            free_ports(1, taken=taken)[0] for _ in range(4)
        )
        self.ray = free_ports(8, taken=taken)[0]
        self.proc: subprocess.Popen[bytes] | None = None
        self.output = var / "up-output.log"  # removed with the var dir

    def start(self) -> float:
        """Run `rlstudio up`; return the seconds until /api/health said 200."""
        argv = [str(RLSTUDIO), "up", "--port", str(self.web)]
        argv += ["--postgres-port", str(self.postgres), "--redis-port", str(self.redis)]
        argv += ["--ray-port", str(self.ray), "--ray-dashboard-port", str(self.dashboard)]
        # The demo build (a ~2 min warm start of the tiny model) is the trainer's to test;
        # here it would only make the suite slower.
        argv += ["--no-demo"]
        started = time.monotonic()
        with self.output.open("ab") as out:
            self.proc = subprocess.Popen(
                argv, env=studio_env(self.var), stdout=out, stderr=subprocess.STDOUT
            )
        deadline = started + FIRST_START_TIMEOUT_S
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"rlstudio up exited:\n{self.log()}"
            try:
                response = requests.get(f"http://127.0.0.1:{self.web}/api/health", timeout=3)
                if response.status_code == 200:
                    return time.monotonic() - started
            except requests.RequestException:
                pass
            time.sleep(0.5)
        raise AssertionError(f"/api/health never said 200:\n{self.log()}")

    def descendants(self) -> set[tuple[int, float]]:
        assert self.proc is not None
        found = set()
        for proc in psutil.Process(self.proc.pid).children(recursive=True):
            try:
                found.add((proc.pid, proc.create_time()))
            except psutil.Error:
                continue
        return found

    def stop(self) -> float:
        assert self.proc is not None
        started = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=60)
        return time.monotonic() - started

    def query(self, sql: str) -> list[tuple[object, ...]]:
        url = f"postgresql://postgres@127.0.0.1:{self.postgres}/rlstudio"
        with psycopg.connect(url, connect_timeout=5) as conn:
            return conn.execute(sql).fetchall()

    def log(self) -> str:
        return self.output.read_text(errors="replace") if self.output.exists() else ""

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            for proc in psutil.Process(self.proc.pid).children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    proc.kill()
            self.proc.kill()
            self.proc.wait()
        kill_processes_mentioning(str(self.var))


def survivors(recorded: set[tuple[int, float]]) -> list[str]:
    alive = []
    for pid, created in recorded:
        try:
            proc = psutil.Process(pid)
            if proc.create_time() == created and proc.status() != psutil.STATUS_ZOMBIE:
                alive.append(f"{pid} {' '.join(proc.cmdline())[:120]}")
        except psutil.Error:
            continue
    return alive


def assert_stops_cleanly(studio: Studio) -> None:
    recorded = studio.descendants()
    assert len(recorded) >= 6, "expected postgres, redis, ray, web, worker and beat at least"
    took = studio.stop()
    assert took < STOP_LIMIT_S, f"stopping took {took:.1f} s:\n{studio.log()}"
    assert studio.proc is not None and studio.proc.returncode == 0, studio.log()
    time.sleep(0.5)  # let init reap whatever re-parented to it at the very end
    assert survivors(recorded) == []
    for marker in (str(studio.var), str(ray_temp_dir(studio.var))):
        leftovers = [" ".join(p.cmdline())[:120] for p in processes_mentioning(marker)]
        assert leftovers == [], f"processes still mention {marker}"


def test_up_runs_the_studio_stops_without_orphans_keeps_data_and_dies_with_its_children(
    var_dir,
):
    studio = Studio(var_dir)
    try:
        first = studio.start()
        identity = studio.query("SELECT system_identifier FROM pg_control_system()")
        assert studio.query("SELECT username, is_superuser FROM auth_user") == [("admin", True)]
        assert (var_dir / "demo" / "grpo-tiny-arith.yaml").exists()
        assert_stops_cleanly(studio)
        first_log = studio.log()
        assert "with password" in first_log
        assert "first start took" in first_log

        later = studio.start()
        second_log = studio.log()[len(first_log) :]
        assert studio.query("SELECT system_identifier FROM pg_control_system()") == identity
        assert studio.query("SELECT username FROM auth_user") == [("admin",)]
        assert "with password" not in second_log, "the admin password is printed only once"
        assert "first start" not in second_log
        assert_stops_cleanly(studio)
        print(f"rlstudio up: first start {first:.1f} s, later start {later:.1f} s")

        # SIGKILL gives `up` no chance to clean up: the parent-death signal must.
        studio.start()
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

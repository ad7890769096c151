"""A `rlstudio up` process for the tests that run the studio as a user would."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import time
from pathlib import Path

import psutil
import psycopg
import requests

from studio.platform import generated_secrets
from studio.platform.services import ray_temp_dir
from tests.platform.conftest import (
    RLSTUDIO,
    free_ports,
    kill_processes_mentioning,
    processes_mentioning,
    studio_env,
)

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
        self.warm_log_from = 0  # where the last start began writing var/logs/warm-runtime.log

    def start(self, demo: bool = False) -> float:
        """Run `rlstudio up`; return the seconds until /api/health said 200."""
        argv = [str(RLSTUDIO), "up", "--port", str(self.web)]
        argv += ["--postgres-port", str(self.postgres), "--redis-port", str(self.redis)]
        argv += ["--ray-port", str(self.ray), "--ray-dashboard-port", str(self.dashboard)]
        # The demo build (a ~2 min warm start of the tiny model) is the trainer's to test;
        # here it would only make the suite slower (bench/up_stop_with_run.py asks for it).
        argv += [] if demo else ["--no-demo"]
        started = time.monotonic()
        # The runtime's log is appended to by every start: only this start's part counts.
        warm_log = self.var / "logs" / "warm-runtime.log"
        self.warm_log_from = warm_log.stat().st_size if warm_log.exists() else 0
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

    def wait_for_warm_runtime(self, timeout_s: float = 180) -> None:
        """Until the warm trainer runtime the last `up` started once the studio was up
        answers (its `python -m trainer.warm start` says so in var/logs/warm-runtime.log,
        after what earlier starts wrote there: read from the start, a later start's wait
        ended at once on the first start's line, and the test killed `up` while its
        runtime was still importing)."""
        log = self.var / "logs" / "warm-runtime.log"

        def this_start() -> str:
            with log.open("rb") as handle:
                handle.seek(self.warm_log_from)
                return handle.read().decode(errors="replace")

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if log.exists() and "warm runtime: ready" in this_start():
                return
            time.sleep(0.5)
        said = this_start() if log.exists() else "(no log)"
        raise AssertionError(f"the warm runtime never answered:\n{said[-3000:]}")

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
        """As the studio's own role, with the password `up` generated."""
        url = generated_secrets.embedded_database_url(self.var, self.postgres)
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

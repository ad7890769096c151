"""A killed or hung worker fails the run with a clear message instead of hanging; the
command line also starts (and stops) its own Ray head when RAY_ADDRESS is unset."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from trainer.distributed.cluster import die_with_parent
from trainer.reporting.jsonl import read_records

from .conftest import small_run_overrides

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def wait_until(
    check: Callable[[], bool], timeout_s: float, what: str, proc: subprocess.Popen[bytes]
) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if proc.poll() is not None:
            raise AssertionError(f"the run exited before {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} after {timeout_s:g} s")
        time.sleep(0.5)


def records(path: Path) -> list[dict]:
    return read_records(path) if path.exists() else []


class CliRun:
    """`python -m trainer run` with two workers, its own Ray head, a JSONL log."""

    def __init__(self, raw_demo: Path, tmp: Path, *overrides: str) -> None:
        self.jsonl, self.stderr = tmp / "run.jsonl", tmp / "stderr.txt"
        argv = [sys.executable, "-m", "trainer", "run", "--quiet", "--jsonl", str(self.jsonl)]
        argv += [*small_run_overrides(raw_demo, tmp), "resources.num_workers=2"]
        argv += ["trainer.total_steps=500", "checkpoint.save_every=0", *overrides]
        env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
        with open(self.stderr, "wb") as out:
            # It ends with this pytest (a killed one left the run and its Ray head behind).
            self.proc = subprocess.Popen(
                argv, cwd=REPO, env=env, stdout=out, stderr=out, preexec_fn=die_with_parent
            )

    def worker_pids(self) -> dict[int, int]:
        """After the first step: the pid of each rank, from the run's own log line."""
        wait_until(
            lambda: any(r["type"] == "metrics" and r["step"] >= 1 for r in records(self.jsonl)),
            600,
            "first step",
            self.proc,
        )
        started = next(
            r["message"]
            for r in records(self.jsonl)
            if "distributed workers" in r.get("message", "")
        )
        found = re.findall(r"rank (\d) \(pid (\d+)", started)
        return {int(rank): int(pid) for rank, pid in found}

    def log(self) -> str:
        return self.stderr.read_text(errors="replace")

    def final_status(self) -> dict:
        return [r for r in records(self.jsonl) if r["type"] == "status"][-1]

    def assert_nothing_left(self, pids: dict[int, int]) -> None:
        """The workers and the private Ray head are gone once the run has ended."""
        head_dir = re.search(r"temp dir (/tmp/rt-[\w-]+)", self.log())
        assert head_dir, self.log()[-2000:]
        deadline = time.monotonic() + 30
        while True:
            left = [
                p.pid
                for p in psutil.process_iter(["pid", "cmdline", "status"])
                if p.info["status"] != psutil.STATUS_ZOMBIE
                and (
                    p.pid in pids.values() or head_dir.group(1) in " ".join(p.info["cmdline"] or [])
                )
            ]
            if not left or time.monotonic() > deadline:
                break
            time.sleep(1)
        assert not left, f"still running: {left}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()


def test_a_killed_worker_fails_the_run_at_once_naming_the_worker(raw_demo, tmp_path):
    run = CliRun(raw_demo, tmp_path)
    try:
        pids = run.worker_pids()
        assert sorted(pids) == [0, 1]
        os.kill(pids[1], signal.SIGKILL)
        killed_at = time.monotonic()
        wait_until(lambda: "died during" in run.log(), 60, "failure", run.proc)
        noticed_in = time.monotonic() - killed_at
        run.proc.wait(timeout=180)  # stopping the other worker and the Ray head
        ended_in = time.monotonic() - killed_at
    finally:
        run.stop()
    print(f"failure noticed {noticed_in:.1f} s and the run ended {ended_in:.1f} s after the kill")
    assert run.proc.returncode != 0
    status = run.final_status()
    assert status["status"] == "failed"
    assert f"worker rank 1 (pid {pids[1]}" in status["detail"]
    assert "died" in status["detail"]
    run.assert_nothing_left(pids)


def test_a_hung_worker_fails_the_run_after_the_worker_timeout(raw_demo, tmp_path):
    timeout_s = 60  # also bounds the workers' start-up on a loaded 2-core machine
    run = CliRun(raw_demo, tmp_path, f"resources.worker_timeout_s={timeout_s}")
    try:
        pids = run.worker_pids()
        os.kill(pids[1], signal.SIGSTOP)  # alive but silent, as a worker stuck in a kernel
        stopped_at = time.monotonic()
        run.proc.wait(timeout=timeout_s + 120)
        ended_in = time.monotonic() - stopped_at
    finally:
        run.stop()
        for pid in pids.values():  # a stopped process would not see its SIGKILL otherwise
            if psutil.pid_exists(pid):
                os.kill(pid, signal.SIGCONT)
    print(f"the run ended {ended_in:.1f} s after the worker stopped answering")
    assert run.proc.returncode != 0
    status = run.final_status()
    assert status["status"] == "failed"
    # Either the controller's deadline names the silent rank, or the other rank's
    # collective times out and it reports that: both name a worker and the phase.
    assert "worker rank" in status["detail"]
    assert re.search(r"no answer within resources.worker_timeout_s|failed during", status["detail"])
    if "no answer within" in status["detail"]:
        # The stopped rank is named as stopped (it cannot write its stacks); a late rank
        # that runs (rank 0, when it waits for rank 1 in a collective) wrote its stacks.
        assert "rank 1 is stopped (SIGSTOP or a debugger)" in status["detail"]
        if "worker rank 0" in status["detail"]:
            assert "their threads' stacks are in the run's log (rank 0)" in status["detail"]
            assert re.search(rf"\(PolicyWorker pid={pids[0]}\).*Thread 0x", run.log())
    run.assert_nothing_left(pids)

"""Closing a sandbox pool ends every process it started, whatever its calls were doing:
sleeping, spinning, forking, or being killed for memory or time at that moment.

A pool's processes are found by its tag: each zygote is started with its worker's scratch
folder as an argument, and every helper, template and call is a fork of it (same command
line). `test_trainer_account_on_ray` runs this module as the unprivileged trainer account
too, where the sandbox lives in a user namespace instead of running as root.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from tests.rewards.conftest import needs_full_sandbox, request
from trainer.rewards import RewardResult, SandboxLimits, SandboxPool
from trainer.rewards.sandbox import proctree

pytestmark = needs_full_sandbox()

# Each row does what its `kind` says; every kind but "quick" is stopped by a limit (memory,
# time, processes) if the pool does not close first.
REWARD = """
import os, time

def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    kind = extra_info["kind"]
    if kind == "memory":
        hog = []
        while True:
            hog.append(bytearray(4 << 20))
    if kind == "sleep":
        time.sleep(60)
    if kind == "spin":
        while True:
            pass
    if kind == "fork":
        for _ in range(4):
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
        time.sleep(60)
    return 1.0
"""
KINDS = ("memory", "sleep", "spin", "fork", "quick")
ROUNDS = 4  # each closes at another moment of another mix of rows (seeded)
SUBREAPER = "import ctypes; ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)\n"  # PR_SET_CHILD_SUBREAPER


def pool_tag(pool: SandboxPool) -> str:
    """The scratch root every process of this pool names on its command line."""
    pid = pool.worker_pids[0]
    assert pid is not None
    last_argument = Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")[-1]
    return str(Path(last_argument.decode()).parent)


def live_processes_of(tag: str) -> list[psutil.Process]:
    """Processes (zombies aside) whose last argument is ``tag`` or a path below it."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        last = (proc.info["cmdline"] or [""])[-1]
        if (last == tag or last.startswith(tag + "/")) and proc.info["status"] != "zombie":
            found.append(proc)
    return found


@pytest.mark.parametrize("seed", range(ROUNDS))
def test_closing_a_pool_mid_batch_waits_for_every_process_it_started(seed: int) -> None:
    rng = random.Random(seed)
    limits = SandboxLimits(timeout_s=1.5, memory_mb=64, load_timeout_s=20)
    pool = SandboxPool(REWARD, workers=2, limits=limits)
    tag = pool_tag(pool)
    rows = [request("x", kind=rng.choice(KINDS)) for _ in range(6)]
    scored: list[list[RewardResult]] = []
    scoring = threading.Thread(target=lambda: scored.append(pool.score_batch(rows)))
    scoring.start()
    time.sleep(rng.uniform(0.05, 2.0))  # calls start, hit their limits, are killed...
    assert live_processes_of(tag), "the pool's zygotes run before it closes"

    pool.close()

    assert live_processes_of(tag) == []  # at once: close() returned after they all ended
    scoring.join(timeout=30)
    assert not scoring.is_alive(), "the batch in flight ends when its pool closes"
    (results,) = scored
    assert len(results) == len(rows)
    time.sleep(0.5)  # nothing is started late by the batch's thread either
    assert live_processes_of(tag) == []


def test_a_closed_pool_refuses_to_score() -> None:
    pool = SandboxPool(REWARD, limits=SandboxLimits(timeout_s=1.0))
    pool.close()
    with pytest.raises(RuntimeError, match="closed"):
        pool.score_batch([request("x", kind="quick")])


def test_ending_a_tree_that_keeps_forking_leaves_nothing() -> None:
    """`end_tree` on a process whose descendants fork all the time (as a fork bomb's do,
    each parent exiting so its children are orphaned): nothing survives, orphans included,
    and the call returns only once all have exited."""
    script = (
        "import os, time\n"
        "while True:\n"
        "    if os.fork() == 0:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(60); os._exit(0)\n"
        "        time.sleep(0.01); os._exit(0)\n"  # its child is orphaned
        "    time.sleep(0.005)\n"
    )
    tag = f"end-tree-{os.getpid()}-{time.monotonic_ns()}"
    # A subreaper of its own, as the zygote is: orphans stay below it, where end_tree looks.
    root = subprocess.Popen([sys.executable, "-c", SUBREAPER + script, tag])
    time.sleep(0.5)
    assert len(live_processes_of(tag)) > 3

    assert proctree.end_tree(root.pid) == []

    assert live_processes_of(tag) == []
    root.wait(timeout=5)

"""The live-stack processes the tests start (tests/live.py) end with the process that
started them, even when it is killed and runs no cleanup of its own."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

from tests.live import REPO_ROOT

STARTER = """
import sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
from tests.live import spawn
sleeper = [sys.executable, "-c", "import time; time.sleep(120)"]
child = spawn("sleeper", sleeper, {{}}, Path({logs!r}))
print(child.proc.pid, flush=True)
time.sleep(120)
"""


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_a_spawned_process_ends_when_its_starter_is_killed(tmp_path: Path) -> None:
    code = STARTER.format(root=str(REPO_ROOT), logs=str(tmp_path))
    starter = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert starter.stdout is not None
    child = int(starter.stdout.readline())
    assert not gone(child)

    starter.send_signal(signal.SIGKILL)  # no atexit, no fixture teardown
    starter.wait()
    deadline = time.monotonic() + 10
    while not gone(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert gone(child), f"pid {child} outlived the process that started it"

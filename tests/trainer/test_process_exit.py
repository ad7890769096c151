"""`exit_now` leaves a process as the interpreter would (threads joined, atexit handlers
run, stdio flushed, the exit code kept), only without freeing its modules."""

from __future__ import annotations

import subprocess
import sys

PROGRAM = """
import atexit, sys, threading, time
from trainer.reporting.process_exit import exit_now

atexit.register(lambda: print("atexit ran"))
threading.Thread(target=lambda: (time.sleep(0.2), print("thread finished"))).start()
sys.stdout.write("buffered, no newline")
exit_now(143)
"""


def test_exit_now_joins_threads_runs_atexit_flushes_and_keeps_the_code():
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 143, done.stderr
    assert done.stdout.index("thread finished") < done.stdout.index("atexit ran")
    assert "buffered, no newline" in done.stdout

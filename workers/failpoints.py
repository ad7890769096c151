"""Failpoints: kill this worker process at a named point of a task, for crash tests.

Off unless `RLSTUDIO_FAILPOINTS_DIR` is set (tests only). A test arms a point by
creating the file `<dir>/run-<id>-<point>`; the first task to pass that point for that
run deletes the file and SIGKILLs its own process, exactly like a machine losing power
at that line. The file is deleted first, so the redelivered task goes through.

A file holding `hang` makes the task stop there instead (logging "failpoint ...
hanging"), so the test can kill the whole worker, parent included, at that point.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

logger = logging.getLogger(__name__)

ENV = "RLSTUDIO_FAILPOINTS_DIR"


def _off(point: str) -> None:
    return None


def failpoints_for(run_id: int) -> Callable[[str], None]:
    directory = os.environ.get(ENV)
    if not directory:
        return _off

    def hit(point: str) -> None:
        marker = Path(directory) / f"run-{run_id}-{point}"
        try:
            action = marker.read_text().strip()
            marker.unlink()
        except FileNotFoundError:
            return
        if action == "hang":
            logger.warning("failpoint %s of run %s: hanging in pid %s", point, run_id, os.getpid())
            while True:
                time.sleep(1)
        logger.warning("failpoint %s of run %s: SIGKILL to pid %s", point, run_id, os.getpid())
        os.kill(os.getpid(), signal.SIGKILL)

    return hit

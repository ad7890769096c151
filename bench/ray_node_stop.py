"""How long a Ray head takes to stop after SIGTERM, and how (docs/distributed.md,
"Stopping a node"). What `ray start` does on SIGTERM is Ray's to change between
releases (its drain came with Ray Serve on Kubernetes), so this measures it: a test-suite
head (tests.live.start_ray_head: dashboard, agents, 20 processes), SIGTERM, then when
`ray start` exited, how (its code: 1 is its own handler, -9 our SIGKILL), and when the
last process of its group was gone. About 15 s a head; rerun on a Ray upgrade.

    python bench/ray_node_stop.py                      # as we stop one: `ray start` alone
    python bench/ray_node_stop.py --group              # SIGTERM to the whole group
    python bench/ray_node_stop.py --drain [--group]    # with Ray's default drain
    python bench/ray_node_stop.py --heads 3            # three heads, one after another

Nothing here kills after a grace: a head that drains is waited for (up to 60 s).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests import live
from trainer.distributed import ray_settings

WAIT_S = 60.0


def gone(process: psutil.Process) -> bool:
    try:
        return process.status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return True


def stop_once(whole_group: bool) -> str:
    head = live.start_ray_head(Path(tempfile.mkdtemp(prefix="ray-stop-")))
    group = live.group_members(head.proc.pid)
    started = time.monotonic()
    if whole_group:
        os.killpg(head.proc.pid, signal.SIGTERM)
    else:
        head.proc.send_signal(signal.SIGTERM)
    try:
        head.proc.wait(timeout=WAIT_S)
        exited = f"{time.monotonic() - started:.2f} s"
    except subprocess.TimeoutExpired:
        exited = f"not within {WAIT_S:g} s"
    while not all(gone(p) for p in group) and time.monotonic() - started < WAIT_S:
        time.sleep(0.02)
    all_gone = time.monotonic() - started
    drained = "Draining for up to" in head.log()
    for process in live.group_members(head.proc.pid):  # what a head that did not stop left
        with contextlib.suppress(psutil.Error):
            process.kill()
    return (
        f"`ray start` exited {exited} (code {head.proc.returncode}), group of {len(group)} "
        f"gone {all_gone:.2f} s, drained: {drained}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--group", action="store_true", help="SIGTERM the whole group")
    parser.add_argument("--drain", action="store_true", help="Ray's default drain on")
    parser.add_argument("--heads", type=int, default=1)
    args = parser.parse_args()
    if args.drain:  # start_ray_head reads NODE_ENV when it starts a head
        ray_settings.NODE_ENV.pop("RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S")
    how = "the group" if args.group else "`ray start` alone"
    print(f"SIGTERM to {how}, drain {'on' if args.drain else 'off'}:")
    for _ in range(args.heads):
        print(" ", stop_once(args.group), flush=True)


if __name__ == "__main__":
    main()

"""Where Ray's setproctitle looks for a worker's argv (#46).

Ray's process titles ("ray::PolicyWorker.model_states") are written over the argv area,
which Ray's vendored setproctitle finds by walking backwards from `environ[0]`. This
starts real Ray worker processes (default_worker.py with a live private head's arguments
and environment) up to their first title, with SPT_DEBUG on, and counts where the walk
ended:

    python bench/ray_title_walk.py N first     # RAY_CLIENT_MODE first in the environment
    python bench/ray_title_walk.py N shuffled  # the head's variables in a random order

`first` is the order a raylet hands over in about one head in 46 (every raylet has
RAY_CLIENT_MODE: `ray start` sets it): the worker's `import ray` sets it again, `environ[0]`
moves to the heap, and the walk reads the heap (docs/distributed.md, "What the address
sanitizer found").
Outcomes: "matched on the stack" (the right area), "fell back to /proc/self/stat" (the
walk found nothing, and Ray 2.60 takes the argv bounds from the kernel: right too), or
"matched on the heap" (titles would be written into heap memory). Each worker is killed
once it printed where its walk ended, before it registers with the raylet.
"""

from __future__ import annotations

import argparse
import collections
import random
import re
import subprocess
import sys
import time

import ray

from trainer.distributed.cluster import local_ray_head


@ray.remote(num_cpus=0)
class WorkerShape:
    def argv_and_environment(self) -> tuple[list[str], dict[str, str]]:
        with open("/proc/self/environ") as f:  # as the raylet started this worker
            env = dict(item.split("=", 1) for item in f.read().split("\0") if "=" in item)
        return list(sys.orig_argv), env


def where_the_walk_ended(argv: list[str], env: dict[str, str]) -> tuple[str, str]:
    worker = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert worker.stdout is not None
    text, started = "", time.monotonic()
    while time.monotonic() - started < 30:
        line = worker.stdout.readline().decode(errors="replace")
        if not line:
            break
        text += line
        if "found argv[0]" in line or "falling back" in line or "from environ or" in line:
            break
    with open(f"/proc/{worker.pid}/maps") as f:  # read before the kill
        stack = next(line.split()[0] for line in f if line.rstrip().endswith("[stack]"))
    low, high = (int(bound, 16) for bound in stack.split("-"))
    worker.kill()
    worker.wait()
    if "falling back to /proc/self/stat" in text:
        return "fell back to /proc/self/stat", text
    found = re.search(r"argv\[0\] should be at (0x[0-9a-f]+)", text)
    if found and "found argv[0]" in text:
        address = int(found.group(1), 16)
        return ("matched on the stack" if low <= address < high else "matched on the heap"), text
    return "no title set up", text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workers", type=int)
    parser.add_argument("order", choices=("first", "shuffled"))
    args = parser.parse_args()
    outcomes: collections.Counter[str] = collections.Counter()
    with local_ray_head() as head:
        head.connect()
        argv, env = ray.get(WorkerShape.remote().argv_and_environment.remote())  # type: ignore[attr-defined]
        env.pop("RAY_CLIENT_MODE", None)
        for _ in range(args.workers):
            items = list(env.items())
            random.shuffle(items)
            first = {"RAY_CLIENT_MODE": "0"} if args.order == "first" else {}
            outcome, text = where_the_walk_ended(argv, {**first, **dict(items), "SPT_DEBUG": "1"})
            outcomes[outcome] += 1
            if outcome in ("matched on the heap", "no title set up"):
                print(f"--- {outcome} ---\n{text[-2000:]}", flush=True)
    print(dict(outcomes))


if __name__ == "__main__":
    main()

"""Which of a Ray driver's and worker's threads run Ray's metrics exporter (issue #46).

trainer/distributed/ray_settings.py turns the exporter off with two settings, because its
thread crashed our driver at exit. What a setting does is Ray's to change between
releases, so this measures it: a private head (trainer.distributed.cluster), one actor,
then gdb's `thread apply all bt` of this driver and of the actor's worker, counting the
threads with an OpenTelemetry or OpenCensus frame. Needs gdb; about 20 s.

    python bench/ray_exporter_threads.py                    # with our settings
    python bench/ray_exporter_threads.py --ray-defaults     # without them
    RAY_enable_open_telemetry=0 python bench/ray_exporter_threads.py --ray-defaults

With --ray-defaults the head and the driver get only what the environment gives (the
last line: one of the two settings alone).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ray

from trainer.distributed import cluster, ray_settings

EXPORTER_FRAMES = ("opentelemetry", "opencensus")


def exporter_threads(pid: int) -> tuple[int, int]:
    """(threads with an exporter frame, all threads) of process `pid`. gdb writes to a
    file: when `pid` is this process, it is stopped and could not drain a pipe."""
    with tempfile.TemporaryFile("w+") as out:
        argv = ["gdb", "-p", str(pid), "-batch", "-iex", "set debuginfod enabled off"]
        subprocess.run(
            [*argv, "-ex", "thread apply all bt 40"],
            stdout=out,
            stderr=subprocess.DEVNULL,
            timeout=120,
            check=False,
        )
        out.seek(0)
        threads = out.read().split("\nThread ")[1:]
    return sum(any(f in t for f in EXPORTER_FRAMES) for t in threads), len(threads)


@ray.remote
class Probe:
    def pid(self) -> int:
        return os.getpid()


def main() -> None:
    if "--ray-defaults" in sys.argv[1:]:
        ray_settings.NO_METRICS_EXPORT_ENV.clear()  # read by cluster when it starts a head
    with cluster.local_ray_head() as head:
        head.connect()
        probe = Probe.remote()  # type: ignore[attr-defined]
        worker_pid = ray.get(probe.pid.remote())  # the handle keeps the worker alive
        time.sleep(12)  # past the exporter's first period (Ray's default: 10 s)
        names = ("RAY_enable_metrics_collection", "RAY_enable_open_telemetry")
        print(f"settings: { {name: os.environ.get(name) for name in names} }")
        for name, pid in (("driver", os.getpid()), ("worker", worker_pid)):
            found, total = exporter_threads(pid)
            print(f"{name}: {found} of {total} threads have an exporter frame")
        ray.shutdown()


if __name__ == "__main__":
    main()

"""Ray settings every Ray process we start runs with: the trainer's private head, `rlstudio
up`'s embedded head, the test suite's heads, every worker and job they start (they inherit
the head's environment), and our drivers.

Light on purpose (no ray import): the studio uses it too.
"""

from __future__ import annotations

# Ray's metrics exporter off. Its background thread (OpenTelemetry's
# PeriodicExportingMetricReader, in every driver and worker) keeps exporting while the
# process exits, and uses objects exit has already destroyed: the test suite's driver
# died of it at exit (#46: SIGSEGV in memcpy, from RayLog's destructor copying a logger name
# that a static destructor had freed; ray-project/ray#60048 fixed a sibling in the gauge
# callback). A trainer job that dies at exit after its work is done is reported failed.
# We read nothing from Ray's metrics (our runs report their own), so no export is lost.
# Both settings are needed (measured on Ray 2.60, stacks of a driver and a worker):
# `enable_metrics_collection=0` alone keeps the OpenTelemetry reader running;
# `enable_open_telemetry=0` alone swaps it for the older OpenCensus exporter.
NO_METRICS_EXPORT_ENV = {
    "RAY_enable_metrics_collection": "0",
    "RAY_enable_open_telemetry": "0",
}

# No drain on SIGTERM. Ray 2.60's `ray start` answers SIGTERM by asking the GCS to drain
# its node and waiting up to RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S (30 s by default) for
# the raylet to go idle, so that Ray Serve can move replicas off a pod Kubernetes is
# deleting. We run no Serve, and we stop a node to stop its jobs: with the drain, a node
# with a job running waits for it, and a head whose whole process group got SIGTERM (as
# ours did until 2026-11-30) found its GCS gone, sat out the 30 s and was killed after
# our grace, Ray's own shutdown of its processes never run (cluster.stop_ray_node).
NO_DRAIN_ENV = {"RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0"}

# No workers prestarted for a node's first driver. With them (Ray's default), the raylet
# starts two idle Python workers when the first driver connects and answers that driver's
# registration only once both have registered: a prestarted worker that hangs while it
# starts holds the driver's `ray.init` forever (Ray 2.60 logs "have not registered within
# the timeout" after 60 s and never answers it; docs/distributed.md, "A driver joining a
# new node"). Without them a node starts workers when tasks and actors ask, and replaces
# one that fails to register; each head also has two idle processes fewer.
NO_FIRST_DRIVER_PRESTART_ENV = {"RAY_prestart_worker_first_driver": "0"}

# The environment every Ray node we run has (head or joining node, the trainer's, `rlstudio
# up`'s, the test suite's and the trainer image's): its own processes and every job's
# inherit it. trainer.distributed.ray_start puts it in, so a node started through
# `ray_start_command` or the image's `ray` cannot be without it.
NODE_ENV = {**NO_METRICS_EXPORT_ENV, **NO_DRAIN_ENV, **NO_FIRST_DRIVER_PRESTART_ENV}

# Variables `import ray` sets in every process (ray/_private/client_mode_hook.py): a Ray
# node must not pass them on to its raylet and workers (trainer.distributed.ray_start
# says why: a worker's first process title walked its heap).
SET_BY_RAY_IMPORT = ("RAY_CLIENT_MODE",)


def ray_start_command(python: str) -> list[str]:
    """`ray start` for every Ray node we run (head or joining node; `ray start`'s own
    flags follow): Ray's command line run by `python` (one with Ray and this package
    installed) through trainer.distributed.ray_start, which keeps SET_BY_RAY_IMPORT out
    of the environment the node's processes inherit."""
    return [python, "-m", "trainer.distributed.ray_start", "start"]


# What `ray start` prints once its node is up. Its dashboard answers before that, and
# `ray start` then waits a fixed 30 s (Ray's node.py) for its raylet to register and exits
# if it does not: a head is ready when its log says this, not when its dashboard answers.
# A driver that joins through the head's temp dir waits for the address file Ray writes
# just after this line (trainer.distributed.cluster.written_gcs_address).
READY_LINE = "Ray runtime started"

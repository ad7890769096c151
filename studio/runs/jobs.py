"""What the studio knows about Ray jobs, without importing Ray.

The run logic (launch, queue, reconcile) talks to the cluster through `RayJobs`, a
protocol that `workers.ray_jobs` implements over Ray's Jobs API. Keeping Ray behind it
lets the studio stay free of Ray (an import-linter contract) and lets unit tests of one
decision feed in a cluster of their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

RayJobStatus = Literal["PENDING", "RUNNING", "STOPPED", "SUCCEEDED", "FAILED"]
RAY_TERMINAL: frozenset[str] = frozenset({"STOPPED", "SUCCEEDED", "FAILED"})


class RayUnavailable(Exception):
    """The cluster could not be asked (dashboard down, timeout, 5xx): transient, retry."""


class RayRejected(Exception):
    """Ray answered and refused the request (bad runtime env, bad resources): permanent."""


@dataclass(frozen=True)
class RayJob:
    submission_id: str
    status: RayJobStatus
    message: str = ""
    start_time_ms: int | None = None
    end_time_ms: int | None = None

    @property
    def terminal(self) -> bool:
        return self.status in RAY_TERMINAL


@dataclass(frozen=True)
class JobSpec:
    """One Ray job submission: everything `JobSubmissionClient.submit_job` is given."""

    submission_id: str
    entrypoint: str
    # Ray shows env_vars, the entrypoint and metadata to whoever reaches its dashboard:
    # nothing there opens anything (a job's secret goes in a file: studio.runs.handoff).
    runtime_env: dict[str, Any]
    num_cpus: float
    num_gpus: float
    memory_bytes: int
    metadata: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class NodeShare:
    """What one Ray node holds for a run's job: the job's entrypoint (a single-process
    run's trainer, a distributed run's controller) and/or some of its trainer workers,
    with the CPUs, GPUs and memory reserved there for them."""

    node_id: str
    node_ip: str
    entrypoint: bool
    workers: int
    cpus: float
    gpus: float
    memory_gb: float


@dataclass(frozen=True)
class ClusterResources:
    """Totals and what is free now, keyed like a run's request: cpus, gpus, memory_gb."""

    total: dict[str, float]
    available: dict[str, float]


class RayJobs(Protocol):
    def submit(self, spec: JobSpec) -> bool:
        """True if this call created the job; False if Ray already has that submission id
        (an earlier try got through). Raises RayUnavailable or RayRejected."""
        ...

    def get(self, submission_id: str) -> RayJob | None:
        """The job, or None when Ray does not know it."""
        ...

    def jobs(self, prefix: str) -> dict[str, RayJob]:
        """Every job whose submission id starts with `prefix`, by submission id."""
        ...

    def stop(self, submission_id: str) -> bool:
        """Ask Ray to stop the job (SIGTERM, then SIGKILL); False if it is not running
        or Ray does not know it."""
        ...

    def placement(self, submission_id: str) -> list[NodeShare]:
        """Where the job runs, one entry per node (entrypoint node first); empty while
        Ray has not started it or no longer knows it. Raises RayUnavailable."""
        ...

    def logs(self, submission_id: str) -> str:
        """The job's output so far ('' when Ray has none)."""
        ...

    def resources(self) -> ClusterResources:
        """The cluster's totals and free resources."""
        ...

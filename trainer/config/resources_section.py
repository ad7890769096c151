"""What a group of Ray workers asks for (`WorkerResources`), and the trainer's own
group with its placement and deadlines (`resources`). The reward model's own group
(`reward.model.resources`) asks with the same fields."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from trainer.config.section import Section


class WorkerResources(Section):
    num_workers: int = Field(1, ge=1, description="Ray workers in the group.")
    cpus_per_worker: float = Field(1.0, gt=0.0, description="CPUs requested per worker.")
    gpus_per_worker: float = Field(0.0, ge=0.0, description="GPUs requested per worker.")
    memory_gb: float = Field(4.0, gt=0.0, description="Memory requested per worker, GiB.")


class ResourcesConfig(WorkerResources):
    num_workers: int = Field(1, ge=1, description="Data-parallel trainer workers (FSDP2 ranks).")
    device: Literal["auto", "cpu", "cuda"] = Field(
        "auto", description="`auto` uses CUDA when available."
    )
    worker_timeout_s: float = Field(
        1800.0,
        gt=0.0,
        le=86400.0,
        description="Distributed trainer: longest a worker may take over one phase "
        "(start-up, generation, an update, a checkpoint) and the collectives' timeout; "
        "past it the run fails naming the worker instead of hanging, and a late worker "
        "on the controller's node first writes its threads' stacks to the run's log.",
    )
    placement_strategy: Literal["PACK", "SPREAD", "STRICT_PACK", "STRICT_SPREAD"] = Field(
        "PACK",
        description="How Ray places the distributed workers (one placement-group bundle "
        "each) over the cluster's nodes: PACK (default) fills as few nodes as it can, SPREAD "
        "spreads them over as many as it can; STRICT_PACK puts all on one node and "
        "STRICT_SPREAD each on a different node, and the run waits (then fails after "
        "resources.worker_timeout_s) while the cluster can't. The run's attempts show "
        "where the workers landed, per node.",
    )

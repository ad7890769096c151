"""Where an attempt runs on the Ray cluster, per node, kept on the attempt for the API.

`reconcile_runs` reads it from Ray (`RayJobs.placement`) while the job runs, until the
job's entrypoint and, for a distributed run, every trainer worker are placed; it is then
kept, so the run shows where each attempt ran after it ended. Reading it once per
reconcile pass until complete costs one or three requests to Ray's dashboard per running
attempt, and none after.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, replace
from typing import Any

from studio.runs.jobs import NodeShare, RayJobs, RayUnavailable
from studio.runs.launch import entrypoint_resources
from studio.runs.models import Run, RunAttempt
from trainer.config.schema import RunConfig
from trainer.distributed import uses_distributed

logger = logging.getLogger(__name__)


def expected_workers(config: dict[str, Any]) -> int:
    """Trainer workers (placement-group bundles) a run's job creates: 0 when the run
    trains in its entrypoint process."""
    cfg = RunConfig.model_validate(config)
    return cfg.resources.num_workers if uses_distributed(cfg) else 0


def placed_workers(shares: list[dict[str, Any]]) -> int:
    return sum(int(share["workers"]) for share in shares)


def is_complete(shares: list[dict[str, Any]], workers: int) -> bool:
    has_entrypoint = any(share["entrypoint"] for share in shares)
    return has_entrypoint and placed_workers(shares) >= workers


def with_entrypoint(share: NodeShare, run: Run) -> NodeShare:
    """Add what the launcher reserved for the job's entrypoint to its node's share."""
    if not share.entrypoint:
        return share
    cpus, gpus, memory_bytes = entrypoint_resources(run)
    return replace(
        share,
        cpus=share.cpus + cpus,
        gpus=share.gpus + gpus,
        memory_gb=round(share.memory_gb + memory_bytes / 1024**3, 3),
    )


def record_placement(attempt: RunAttempt, jobs: RayJobs) -> bool:
    """Read and store the attempt's placement unless it is complete; True if stored."""
    run = Run.objects.only("config", "resources").get(pk=attempt.run_id)
    workers = expected_workers(run.config)
    if is_complete(attempt.placement, workers):
        return False
    try:
        found = jobs.placement(attempt.submission_id)
        shares = [asdict(with_entrypoint(share, run)) for share in found]
    except RayUnavailable as exc:
        logger.info("placement of %s not read (next pass): %s", attempt.submission_id, exc)
        return False
    # Never trade what we know for less: the workers' group is gone once training ends.
    if not shares or placed_workers(shares) < placed_workers(attempt.placement):
        return False
    RunAttempt.objects.filter(pk=attempt.pk).update(placement=shares)
    attempt.placement = shares
    return True

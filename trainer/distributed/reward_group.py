"""A reward model on a Ray worker group of its own (`placement=worker_group`, in
`reward.model` or one of `reward.extra_models`; each such model has its own group).

Each `RewardModelWorker` loads the reward model (`RewardModelScorer`, the same code the
colocated placement runs) on the resources of its bundle, the model's `resources`:
its own CPUs, or a GPU apart from the actor's. `RewardModelGroup` is a `RewardScorer`
for the controller: a batch is cut into contiguous shares, one per worker, scored at
once, and the results come back in request order, so `trainer.training.reward_sources` combines
them with the reward function's exactly as it does a colocated model's. The group is
placed with the trainer's `resources.placement_strategy` and answers within
`resources.worker_timeout_s`, like the trainer's own group.
"""

from __future__ import annotations

from typing import Any

import torch

from trainer.config.reward_section import RewardModelConfig
from trainer.config.schema import ResourcesConfig
from trainer.distributed import crash_evidence
from trainer.distributed.group import ActorGroup
from trainer.distributed.worker import WorkerInfo, worker_info
from trainer.rewards.contract import RewardRequest, RewardResult
from trainer.training.data_parallel import shard_range


class RewardModelWorker:
    """One copy of the reward model in a Ray actor."""

    def __init__(self, cfg: dict[str, Any], rank: int) -> None:
        from trainer.models.reward_model import RewardModelScorer

        crash_evidence.enable()  # all threads' stacks on a fatal signal; a core if asked
        self.cfg = RewardModelConfig.model_validate(cfg)
        self.rank = rank
        res = self.cfg.resources
        # Ray hands the actor `cpus_per_worker` cores; more threads only fight over them.
        torch.set_num_threads(max(1, int(res.cpus_per_worker)))
        self.device = torch.device("cuda", 0) if res.gpus_per_worker else torch.device("cpu")
        self.scorer = RewardModelScorer(self.cfg, self.device)

    def info(self) -> WorkerInfo:
        num_params = sum(p.numel() for p in self.scorer.model.parameters())
        return worker_info(self.rank, self.device, num_params)

    def assigned_resources(self) -> dict[str, float]:
        """What Ray reserved for this worker (CPU, GPU, memory in bytes)."""
        import ray

        return dict(ray.get_runtime_context().get_assigned_resources())

    def score_batch(self, requests: list[RewardRequest]) -> list[RewardResult]:
        return self.scorer.score_batch(requests)


class RewardModelGroup:
    """A `RewardScorer` over the reward model's workers (module docstring)."""

    def __init__(
        self,
        cfg: RewardModelConfig,
        trainer_resources: ResourcesConfig,
        section: str = "reward.model",
    ) -> None:
        config = cfg.model_dump(mode="json")
        self.group = ActorGroup(
            RewardModelWorker,
            lambda rank: (config, rank),
            cfg.resources,
            trainer_resources.worker_timeout_s,
            trainer_resources.placement_strategy,
            section=f"{section}.resources",
            role="reward-model worker" + ("" if section == "reward.model" else f" ({section})"),
        )
        try:
            self.group.infos = self.group.call("info", phase="reward model start-up")
        except BaseException:
            self.group.close()
            raise

    @property
    def size(self) -> int:
        return self.group.size

    def describe(self) -> str:
        return "; ".join(self.group.describe(rank) for rank in range(self.size))

    def score_batch(self, requests: list[RewardRequest]) -> list[RewardResult]:
        shares = [
            ([requests[i] for i in shard_range(len(requests), self.size, rank)],)
            for rank in range(self.size)
        ]
        parts: list[list[RewardResult]] = self.group.call_each(
            "score_batch", shares, phase="reward model scoring"
        )
        return [result for part in parts for result in part]

    def assigned_resources(self) -> list[dict[str, float]]:
        return self.group.call("assigned_resources")

    def close(self) -> None:
        self.group.close()

"""The distributed runtime the training loop runs on: the controller's state (data,
reward scorer, KL controller, shuffle generator) and the worker groups' roles."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

from trainer.algorithms.kl import AdaptiveKLController, FixedKLController, make_kl_controller
from trainer.config.schema import RunConfig
from trainer.distributed import reward_model_groups
from trainer.distributed.cluster import ray_session
from trainer.distributed.controller import DistributedRoles, ShardedRollout
from trainer.distributed.group import WorkerGroup
from trainer.distributed.reward_group import RewardModelGroup
from trainer.models.loading import load_tokenizer
from trainer.reporting.base import Reporter
from trainer.rewards.contract import RewardScorer
from trainer.rollout.chunked import chunk_prompts
from trainer.rollout.engine import RolloutEngine
from trainer.training.metrics import throughput_metrics
from trainer.training.reward_sources import make_reward_scorer
from trainer.training.roles import Runtime
from trainer.training.state import PEAK_FLOPS
from trainer.training.step_hooks import StepHook


@dataclass
class ControllerState:
    """`trainer.training.roles.StepContext` of the controller: everything but the models."""

    cfg: RunConfig
    device: torch.device  # where batches are built: the CPU; workers move them
    tokenizer: Any
    engine: RolloutEngine
    scorer: RewardScorer
    kl_ctrl: FixedKLController | AdaptiveKLController
    pad_token_id: int
    update_generator: torch.Generator
    num_params: int
    peak_flops: float | None  # all workers together; None on CPUs
    step_hooks: tuple[StepHook, ...] = ()  # none: the distributed update never replays

    def perf_metrics(self, tokens: float, step_s: float, update_s: float) -> dict[str, float]:
        return throughput_metrics(self.num_params, self.peak_flops, tokens, step_s, update_s)


def _peak_flops(device_names: list[str]) -> float | None:
    peaks = [next((p for k, p in PEAK_FLOPS.items() if k in name), None) for name in device_names]
    return None if None in peaks or not peaks else float(sum(p for p in peaks if p))


@contextlib.contextmanager
def distributed_runtime(cfg: RunConfig, reporter: Reporter) -> Iterator[Runtime]:
    """Ray session, worker group and controller state for one run; all torn down on exit
    (workers killed, placement freed, a private Ray head stopped)."""
    if cfg.rollout.engine == "vllm" and not cfg.resources.gpus_per_worker:
        raise ValueError(
            "rollout.engine='vllm' runs on GPU workers: set resources.gpus_per_worker=1 "
            "(or use rollout.engine='hf' on CPU workers)"
        )
    with contextlib.ExitStack() as stack:
        stack.enter_context(ray_session())
        group = WorkerGroup(cfg)
        stack.callback(group.close)
        reporter.log(
            "info",
            f"{group.size} distributed workers: "
            + "; ".join(group.describe(r) for r in range(group.size)),
        )
        torch.manual_seed(cfg.trainer.seed)
        tokenizer = load_tokenizer(cfg.model.path)
        # The driver scores rewards, and a colocated reward model, on its CPU.
        model_groups: dict[str, RewardModelGroup] = {}
        try:
            for section, model in reward_model_groups(cfg):
                model_groups[model.name] = group_of = RewardModelGroup(
                    model, cfg.resources, section
                )
                reporter.log("info", f"{section} workers: {group_of.describe()}")
            scorer = make_reward_scorer(cfg.reward, torch.device("cpu"), model_groups)
        except BaseException:
            for started in model_groups.values():
                started.close()
            raise
        stack.callback(scorer.close)  # the combined scorer closes the models' groups too
        per_chunk = chunk_prompts(cfg.rollout.micro_batch_size, cfg.rollout.n)
        chunks = -(-cfg.data.train_batch_size // per_chunk)
        if chunks < group.size:
            reporter.log(
                "warning",
                f"a step's {cfg.data.train_batch_size} prompts make {chunks} generation "
                f"chunks of {per_chunk} (rollout.micro_batch_size // rollout.n) for "
                f"{group.size} workers: {group.size - chunks} of them idle while generating",
            )
        state = ControllerState(
            cfg=cfg,
            device=torch.device("cpu"),
            tokenizer=tokenizer,
            engine=ShardedRollout(group, cfg.rollout.micro_batch_size),
            scorer=scorer,
            kl_ctrl=make_kl_controller(cfg.algorithm.kl_ctrl),
            pad_token_id=int(tokenizer.pad_token_id),
            update_generator=torch.Generator().manual_seed(cfg.trainer.seed),
            num_params=group.infos[0].num_params,
            peak_flops=_peak_flops([info.device for info in group.infos]),
        )
        yield Runtime(state=state, roles=DistributedRoles(cfg, group))

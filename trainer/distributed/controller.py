"""The controller's side of the worker group: the rollout engine and the model roles the
unchanged training step (`trainer.training.step.train_step`) calls.

- `ShardedRollout` (a `RolloutEngine`): the prompts are cut into the same seeded chunks
  as in one process (`trainer.rollout.chunked`) and each rank generates a contiguous
  share of the chunks; the completions come back in prompt order.
- `DistributedRoles` (a `ModelRoles`): every rank gets the whole batch (one object in
  Ray's store) and computes its shard of log-probs/values, or its share of each
  mini-batch's gradient; the controller concatenates shards and keeps the mini-batch
  shuffle generator, so a checkpoint holds it exactly as in one process.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import ray
import torch
from torch import Tensor

from trainer.config.schema import RunConfig
from trainer.distributed.group import WorkerGroup
from trainer.distributed.worker import UpdateResult
from trainer.models.loading import load_policy
from trainer.models.lora import add_adapters, export_adapted, load_trainable_weights
from trainer.rollout.chunked import chunk_bounds, chunk_prompts
from trainer.rollout.engine import Completion, SamplingParams
from trainer.training.batch import RolloutBatch
from trainer.training.data_parallel import shard_range
from trainer.training.roles import ModelStates


class ShardedRollout:
    """Data-parallel generation over the worker group (module docstring)."""

    def __init__(self, group: WorkerGroup, micro_batch_size: int) -> None:
        self.group = group
        self.micro_batch_size = micro_batch_size

    def generate(self, prompts: list[list[int]], sampling: SamplingParams) -> list[Completion]:
        # The chunks one process makes (trainer.rollout.chunked), shared out by rank.
        chunks = chunk_bounds(len(prompts), chunk_prompts(self.micro_batch_size, sampling.n))
        shares = []
        for rank in range(self.group.size):
            mine = shard_range(len(chunks), self.group.size, rank)
            shares.append(
                ([(i, chunks[i].start, [prompts[p] for p in chunks[i]]) for i in mine], sampling)
            )
        parts: list[list[Completion]] = self.group.call_each("generate", shares, phase="gen")
        return [c for part in parts for c in part]

    def update_weights(self, state: Mapping[str, Tensor]) -> None:
        """The workers sync from their own FSDP shards (`DistributedRoles`); a state dict
        from the controller is only needed to load foreign weights."""
        if state:
            self.group.call("load_rollout_weights", ray.put(dict(state)))

    def sleep(self) -> None:
        self.group.call("sleep")

    def wake(self) -> None:
        self.group.call("wake")


def _memory_metrics(results: list[UpdateResult]) -> dict[str, float]:
    """The busiest rank's memory (what decides whether a run fits)."""
    keys = {k for r in results for k in r.memory}
    return {k: max(r.memory.get(k, 0.0) for r in results) for k in keys}


class DistributedRoles:
    def __init__(self, cfg: RunConfig, group: WorkerGroup) -> None:
        self.cfg = cfg
        self.group = group

    def _rows(self, method: str, batch: RolloutBatch, *args: Any) -> Tensor:
        shards: list[Tensor] = self.group.call(
            method, ray.put(batch.to(torch.device("cpu"))), *args
        )
        return torch.cat(shards).to(batch.input_ids.device)

    def actor_logprobs(self, batch: RolloutBatch, temperature: float) -> Tensor:
        return self._rows("actor_logprobs", batch, temperature)

    def ref_logprobs(self, batch: RolloutBatch, temperature: float) -> Tensor:
        return self._rows("ref_logprobs", batch, temperature)

    def actor_sum_pi_squared(self, batch: RolloutBatch, temperature: float) -> Tensor:
        return self._rows("actor_sum_pi_squared", batch, temperature)

    def critic_values(self, batch: RolloutBatch) -> Tensor:
        return self._rows("critic_values", batch)

    def update_critic(
        self, batch: RolloutBatch, mini_batch_rows: int, generator: torch.Generator
    ) -> dict[str, float]:
        results: list[UpdateResult] = self.group.call(
            "update_critic",
            ray.put(batch.to(torch.device("cpu"))),
            mini_batch_rows,
            generator.get_state(),
        )
        generator.set_state(results[0].generator_state)
        return dict(results[0].metrics)

    def update_actor(
        self,
        batch: RolloutBatch,
        temperature: float,
        mini_batch_rows: int,
        norm_constant: float,
        generator: torch.Generator,
    ) -> dict[str, float]:
        results: list[UpdateResult] = self.group.call(
            "update_actor",
            ray.put(batch.to(torch.device("cpu"))),
            temperature,
            mini_batch_rows,
            norm_constant,
            generator.get_state(),
        )
        # Metrics are all-reduced on the ranks: rank 0's are everyone's.
        generator.set_state(results[0].generator_state)
        return dict(results[0].metrics) | _memory_metrics(results)

    def step_schedulers(self) -> None:
        self.group.call("step_schedulers")

    def set_schedule_length(self, total_steps: int) -> None:
        self.group.call("set_schedule_length", total_steps)

    def sync_rollout_weights(self) -> None:
        self.group.call("sync_rollout_weights", phase="update_weights")

    def model_states(self) -> ModelStates:
        states = self.group.call("model_states", phase="save_checkpoint")[0]
        assert isinstance(states, ModelStates)
        return states

    def load_model_states(self, states: ModelStates) -> None:
        self.group.call("load_model_states", ray.put(states), phase="load_checkpoint")

    def save_pretrained(self, path: Path) -> None:
        """Rank 0 gathers the weights; this process writes the folder, like checkpoints."""
        weights = self.group.call("actor_weights", phase="export")[0]
        model = load_policy(
            self.cfg.model.path,
            self.cfg.model.dtype,
            "cpu",
            config_overrides=self.cfg.model.config_overrides,
        )
        lora = self.cfg.actor.lora
        if lora.enabled:  # the base from model.path, the trained adapters from rank 0
            adapted = add_adapters(model, lora)
            load_trainable_weights(adapted, weights)
            export_adapted(adapted, path, lora.export)
            return
        model.load_state_dict(weights)
        model.save_pretrained(path, safe_serialization=True)

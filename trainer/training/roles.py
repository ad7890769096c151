"""The models a training step works with (actor, reference, critic), wherever they live.

`trainer.training.step.train_step` asks `ModelRoles` for log-probs, values and updates; it never
touches a module itself. `LocalRoles` runs them on the modules of this process;
`trainer.distributed` runs them on Ray worker groups of FSDP2 ranks. Both end in the
same per-rank functions (`update_actor`, `update_critic`, `rank_logprobs`,
`rank_values`), so the algorithms exist once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import torch
from torch import Tensor, nn

from trainer.algorithms.kl import AdaptiveKLController, FixedKLController
from trainer.config.schema import ActorConfig, RunConfig
from trainer.models.lora import (
    adapters_disabled,
    export_adapted,
    load_trainable_weights,
    trainable_weights,
)
from trainer.rewards.contract import RewardScorer
from trainer.rollout.chunked import ChunkedRollout
from trainer.rollout.engine import RolloutEngine
from trainer.training.batch import RolloutBatch
from trainer.training.data_parallel import SINGLE_PROCESS, DataGroup, map_rows
from trainer.training.logprobs import (
    compute_logprobs,
    response_sum_pi_squared,
    response_token_stats,
)
from trainer.training.optim import set_schedule_length
from trainer.training.state import TrainingState, build_state
from trainer.training.step_hooks import StepHook
from trainer.training.update import critic_values, update_actor, update_critic


@dataclass
class ModelStates:
    """The models' part of a checkpoint, in the single-process format
    (`module.state_dict()`, `optimizer.state_dict()`) however they were trained."""

    actor: dict[str, Tensor]
    actor_optim: dict[str, Any]
    scheduler: dict[str, Any]
    critic: dict[str, Tensor] | None = None
    critic_optim: dict[str, Any] | None = None
    critic_scheduler: dict[str, Any] | None = None


class ModelRoles(Protocol):
    def actor_logprobs(self, batch: RolloutBatch, temperature: float) -> Tensor:
        """(B, R) log-probs of the response tokens under the current actor."""
        ...

    def ref_logprobs(self, batch: RolloutBatch, temperature: float) -> Tensor: ...

    def actor_sum_pi_squared(self, batch: RolloutBatch, temperature: float) -> Tensor:
        """(B, R) sum of squared token probabilities under the current actor (the
        optimal token baselines read it)."""
        ...

    def critic_values(self, batch: RolloutBatch) -> Tensor:
        """(B, R) value of the state before each response token."""
        ...

    def update_critic(
        self, batch: RolloutBatch, mini_batch_rows: int, generator: torch.Generator
    ) -> dict[str, float]: ...

    def update_actor(
        self,
        batch: RolloutBatch,
        temperature: float,
        mini_batch_rows: int,
        norm_constant: float,
        generator: torch.Generator,
    ) -> dict[str, float]: ...

    def step_schedulers(self) -> None: ...

    def set_schedule_length(self, total_steps: int) -> None:
        """The run's length in steps, known once the data is loaded (warmup ratio, decay)."""
        ...

    def sync_rollout_weights(self) -> None:
        """Give the rollout engine the actor's current weights."""
        ...

    def model_states(self) -> ModelStates: ...

    def load_model_states(self, states: ModelStates) -> None:
        """Restore a checkpoint's models (the rollout engine's weights included)."""
        ...

    def save_pretrained(self, path: Path) -> None:
        """Write the actor as a Hugging Face model folder (weights and config)."""
        ...


class StepContext(Protocol):
    """What the step and the loop hold besides the models (`TrainingState` is one)."""

    cfg: RunConfig
    device: torch.device
    tokenizer: Any
    engine: RolloutEngine
    scorer: RewardScorer
    kl_ctrl: FixedKLController | AdaptiveKLController
    pad_token_id: int
    update_generator: torch.Generator
    step_hooks: tuple[StepHook, ...]  # installed by the run's converters

    def perf_metrics(self, tokens: float, step_s: float, update_s: float) -> dict[str, float]:
        """perf/* rates of a step (trainer.training.metrics.throughput_metrics)."""
        ...


@dataclass
class Runtime:
    state: StepContext
    roles: ModelRoles


def rank_logprobs(
    model: nn.Module, batch: RolloutBatch, temperature: float, cfg: ActorConfig, group: DataGroup
) -> Tensor:
    """(shard rows, R) log-probs over this rank's shard of `batch`, without gradients."""

    def forward(micro: RolloutBatch) -> Tensor:
        return response_token_stats(
            model,
            micro,
            temperature,
            False,
            packed=cfg.pack_shared_prompts,
            shared_prefix=cfg.shared_prefix_scoring,
        ).logprobs

    with torch.no_grad():
        return map_rows(
            batch,
            group,
            cfg.micro_batch_size,
            cfg.max_tokens_per_micro_batch,
            cfg.pack_shared_prompts,
            forward,
        )


def rank_sum_pi_squared(
    model: nn.Module, batch: RolloutBatch, temperature: float, cfg: ActorConfig, group: DataGroup
) -> Tensor:
    """(shard rows, R) sum of squared token probabilities over this rank's shard, without
    gradients; padded layout (it needs each position's whole distribution, which the
    packed layouts' logits also give, but one layout keeps this short)."""
    with torch.no_grad():
        return map_rows(
            batch,
            group,
            cfg.micro_batch_size,
            cfg.max_tokens_per_micro_batch,
            False,
            lambda micro: response_sum_pi_squared(model, micro, temperature),
        )


def rank_values(
    critic: nn.Module, batch: RolloutBatch, cfg: ActorConfig, group: DataGroup
) -> Tensor:
    """(shard rows, R) critic values over this rank's shard of `batch`."""
    with torch.no_grad():
        return map_rows(
            batch,
            group,
            cfg.micro_batch_size,
            cfg.max_tokens_per_micro_batch,
            False,  # the critic scores the padded layout
            lambda micro: critic_values(critic, micro),
        )


class LocalRoles:
    """The roles on this process's modules (the single-process trainer)."""

    def __init__(self, state: TrainingState) -> None:
        self.state = state
        self.cfg = state.cfg

    def actor_logprobs(self, batch: RolloutBatch, temperature: float) -> Tensor:
        return self._logprobs(self.state.actor, batch, temperature)

    def actor_sum_pi_squared(self, batch: RolloutBatch, temperature: float) -> Tensor:
        return rank_sum_pi_squared(
            self.state.actor, batch, temperature, self.cfg.actor, SINGLE_PROCESS
        )

    def ref_logprobs(self, batch: RolloutBatch, temperature: float) -> Tensor:
        if self.cfg.actor.lora.enabled:  # the base model is the reference
            with adapters_disabled(self.state.actor):
                return self._logprobs(self.state.actor, batch, temperature)
        assert self.state.ref is not None, "ref_logprobs needs a reference model"
        return self._logprobs(self.state.ref, batch, temperature)

    def _logprobs(self, model: nn.Module, batch: RolloutBatch, temperature: float) -> Tensor:
        actor = self.cfg.actor
        if actor.max_tokens_per_micro_batch is None:
            return compute_logprobs(
                model,
                batch,
                temperature,
                actor.micro_batch_size,
                actor.pack_shared_prompts,
                actor.shared_prefix_scoring,
            )
        return rank_logprobs(model, batch, temperature, actor, SINGLE_PROCESS)

    def critic_values(self, batch: RolloutBatch) -> Tensor:
        assert self.state.critic is not None, "critic_values needs a critic"
        return rank_values(self.state.critic, batch, self.cfg.actor, SINGLE_PROCESS)

    def update_critic(
        self, batch: RolloutBatch, mini_batch_rows: int, generator: torch.Generator
    ) -> dict[str, float]:
        s = self.state
        assert s.critic is not None and s.critic_optimizer is not None
        return update_critic(
            s.critic,
            s.critic_optimizer,
            batch,
            self.cfg.critic,
            self.cfg.actor.micro_batch_size,
            mini_batch_rows,
            generator,
            max_tokens_per_micro_batch=self.cfg.actor.max_tokens_per_micro_batch,
        )

    def update_actor(
        self,
        batch: RolloutBatch,
        temperature: float,
        mini_batch_rows: int,
        norm_constant: float,
        generator: torch.Generator,
    ) -> dict[str, float]:
        s = self.state
        return update_actor(
            s.actor,
            s.optimizer,
            batch,
            self.cfg.actor,
            temperature,
            mini_batch_rows,
            norm_constant,
            generator,
            rollout_correction=self.cfg.algorithm.rollout_correction,
        )

    def step_schedulers(self) -> None:
        self.state.scheduler.step()
        if self.state.critic_scheduler is not None:
            self.state.critic_scheduler.step()

    def set_schedule_length(self, total_steps: int) -> None:
        s = self.state
        set_schedule_length(s.scheduler, total_steps, self.cfg.actor.optim)
        if s.critic_scheduler is not None:
            set_schedule_length(s.critic_scheduler, total_steps, self.cfg.critic.optim)

    def sync_rollout_weights(self) -> None:
        self.state.engine.update_weights(self.state.actor_state_for_engine())

    def model_states(self) -> ModelStates:
        s = self.state
        lora = self.cfg.actor.lora.enabled  # a LoRA checkpoint holds the adapters only
        return ModelStates(
            actor=trainable_weights(s.actor) if lora else s.actor.state_dict(),
            actor_optim=s.optimizer.state_dict(),
            scheduler=s.scheduler.state_dict(),
            critic=s.critic.state_dict() if s.critic is not None else None,
            critic_optim=s.critic_optimizer.state_dict() if s.critic_optimizer else None,
            critic_scheduler=s.critic_scheduler.state_dict() if s.critic_scheduler else None,
        )

    def load_model_states(self, states: ModelStates) -> None:
        s = self.state
        if self.cfg.actor.lora.enabled:
            load_trainable_weights(s.actor, states.actor)
        else:
            s.actor.load_state_dict(states.actor)
        s.optimizer.load_state_dict(states.actor_optim)
        s.scheduler.load_state_dict(states.scheduler)
        if s.critic is not None and s.critic_optimizer is not None and states.critic:
            s.critic.load_state_dict(states.critic)
            if states.critic_optim is not None:
                s.critic_optimizer.load_state_dict(states.critic_optim)
        if s.critic_scheduler is not None and states.critic_scheduler is not None:
            s.critic_scheduler.load_state_dict(states.critic_scheduler)
        self.sync_rollout_weights()

    def save_pretrained(self, path: Path) -> None:
        if self.cfg.actor.lora.enabled:
            export_adapted(self.state.actor, path, self.cfg.actor.lora.export)
            return
        self.state.actor.save_pretrained(path, safe_serialization=True)  # type: ignore[operator]


def local_runtime(cfg: RunConfig) -> Runtime:
    """Everything in this process. The engine generates in seeded chunks, exactly as
    the distributed workers do, so both sample the same completions."""
    state = build_state(cfg)
    state.engine = ChunkedRollout(state.engine, cfg.rollout.micro_batch_size)
    return Runtime(state=state, roles=LocalRoles(state))

"""Everything a training step touches: models, optimizers, engine, reward scorer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import torch
from torch import nn

from trainer.algorithms.kl import AdaptiveKLController, FixedKLController, make_kl_controller
from trainer.config.schema import RunConfig
from trainer.models.converters import build_converters
from trainer.models.loading import (
    ValueModel,
    check_same_tokenizer,
    load_policy,
    load_tokenizer,
    resolve_device,
)
from trainer.models.lora import add_adapters, load_adapter
from trainer.rewards.contract import RewardScorer
from trainer.rollout.engine import RolloutEngine
from trainer.rollout.hf import HFEngine
from trainer.training.metrics import throughput_metrics
from trainer.training.optim import build_optimizer, build_scheduler
from trainer.training.reward_sources import make_reward_scorer
from trainer.training.step_hooks import StepHook

# Dense bf16 peak FLOP/s of accelerators we know, for perf/mfu. CPUs have no
# honest single figure, so MFU is reported only on these devices.
PEAK_FLOPS: dict[str, float] = {"H100": 989e12, "H200": 989e12, "A100": 312e12}


@dataclass
class TrainingState:
    cfg: RunConfig
    device: torch.device
    tokenizer: object
    actor: nn.Module
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler
    engine: RolloutEngine
    scorer: RewardScorer
    kl_ctrl: FixedKLController | AdaptiveKLController
    pad_token_id: int
    update_generator: torch.Generator
    ref: nn.Module | None = None
    critic: nn.Module | None = None
    critic_optimizer: torch.optim.Optimizer | None = None
    critic_scheduler: torch.optim.lr_scheduler.LRScheduler | None = None
    step_hooks: tuple[StepHook, ...] = ()  # installed by the run's converters
    num_params: int = 0
    peak_flops: float | None = None

    def actor_state_for_engine(self) -> Mapping[str, torch.Tensor]:
        """The HF engine shares the actor module, so there is nothing to copy here;
        an engine holding its own weights (vLLM) receives the full state dict."""
        if isinstance(self.engine, HFEngine):
            return {}
        return self.actor.state_dict()

    def perf_metrics(self, tokens: float, step_s: float, update_s: float) -> dict[str, float]:
        metrics = throughput_metrics(self.num_params, self.peak_flops, tokens, step_s, update_s)
        if self.device.type == "cuda":
            metrics["perf/max_memory_allocated_gb"] = torch.cuda.max_memory_allocated() / 2**30
        return metrics


def _peak_flops(device: torch.device) -> float | None:
    if device.type != "cuda":
        return None
    name = torch.cuda.get_device_name(device)
    return next((peak for key, peak in PEAK_FLOPS.items() if key in name), None)


def build_state(cfg: RunConfig) -> TrainingState:
    torch.manual_seed(cfg.trainer.seed)
    device = resolve_device(cfg.resources.device)
    # The run's `speed` converters, applied to each model as it is built.
    converters = build_converters(cfg)
    converters.prepare(device)
    tokenizer = load_tokenizer(cfg.model.path)
    overrides = cfg.model.config_overrides
    actor: nn.Module = converters.apply(
        load_policy(cfg.model.path, cfg.model.dtype, device, config_overrides=overrides), device
    )
    num_params = sum(p.numel() for p in actor.parameters())
    if cfg.model.gradient_checkpointing:
        actor.gradient_checkpointing_enable()  # type: ignore[operator]
    if cfg.actor.lora.enabled:
        if cfg.model.gradient_checkpointing:  # frozen embeddings: checkpoints need an input grad
            actor.enable_input_require_grads()  # type: ignore[operator]
        actor = add_adapters(actor, cfg.actor.lora)
        if cfg.actor.lora.adapter_path:
            load_adapter(actor, cfg.actor.lora.adapter_path, cfg.actor.lora)
    optimizer = build_optimizer(actor, cfg.actor.optim)
    total_steps = cfg.trainer.total_steps or 1_000_000
    scheduler = build_scheduler(optimizer, total_steps, cfg.actor.optim)
    ref = None
    # A LoRA run's reference is its actor with the adapters off (trainer.models.lora).
    if cfg.needs_reference_model and not cfg.actor.lora.enabled:
        ref = converters.apply(
            load_policy(cfg.model.path, cfg.model.dtype, device, config_overrides=overrides),
            device,
        )
        ref.requires_grad_(False).eval()
    critic = critic_optimizer = critic_scheduler = None
    if cfg.needs_critic:
        if cfg.critic.model.path:
            check_same_tokenizer(tokenizer, cfg.critic.model.path, "critic.model.path")
        critic = converters.apply(
            ValueModel.from_pretrained(cfg.critic_model_path, cfg.model.dtype, device), device
        )
        critic_optimizer = build_optimizer(critic, cfg.critic.optim)
        critic_scheduler = build_scheduler(critic_optimizer, total_steps, cfg.critic.optim)
    if cfg.rollout.engine == "vllm":
        raise NotImplementedError(
            "rollout.engine='vllm' runs on the distributed trainer (GPU, optional extra); "
            "use rollout.engine='hf' here."
        )
    engine = HFEngine(actor, tokenizer, device, max_batch_size=cfg.rollout.micro_batch_size)
    # What the converters watch of each step (the CPU replay of linear outputs).
    hooks = converters.watch_steps(engine, device)
    generator = torch.Generator().manual_seed(cfg.trainer.seed)
    return TrainingState(
        cfg=cfg,
        device=device,
        tokenizer=tokenizer,
        actor=actor,
        optimizer=optimizer,
        scheduler=scheduler,
        engine=engine,
        scorer=make_reward_scorer(cfg.reward, device),
        kl_ctrl=make_kl_controller(cfg.algorithm.kl_ctrl),
        pad_token_id=int(tokenizer.pad_token_id),
        update_generator=generator,
        ref=ref,
        critic=critic,
        critic_optimizer=critic_optimizer,
        critic_scheduler=critic_scheduler,
        step_hooks=hooks,
        num_params=num_params,
        peak_flops=_peak_flops(device),
    )

"""AdamW and the learning-rate schedule (linear warmup, then constant/cosine/linear)."""

from __future__ import annotations

import math

import torch
from torch import nn

from trainer.config.schema import OptimConfig


def build_optimizer(model: nn.Module, cfg: OptimConfig) -> torch.optim.AdamW:
    params = [p for p in model.parameters() if p.requires_grad]
    return torch.optim.AdamW(
        params, lr=cfg.lr, betas=cfg.betas, weight_decay=cfg.weight_decay, eps=1e-8
    )


def warmup_steps(total_steps: int, cfg: OptimConfig) -> int:
    """`warmup_steps`, or else `warmup_ratio` of the run's steps rounded down (verl's
    `lr_warmup_steps` <= 0 falls back to `int(lr_warmup_steps_ratio * total_training_steps)`)."""
    if cfg.warmup_steps:
        return cfg.warmup_steps
    return int(cfg.warmup_ratio * total_steps)


def lr_multiplier(step: int, total_steps: int, cfg: OptimConfig) -> float:
    """LR factor applied at optimizer step `step` (0-based)."""
    warmup = warmup_steps(total_steps, cfg)
    if warmup and step < warmup:
        return (step + 1) / warmup
    if cfg.schedule == "constant":
        return 1.0
    decay_steps = max(1, total_steps - warmup)
    progress = min(1.0, (step - warmup) / decay_steps)
    if cfg.schedule == "cosine":
        shape = 0.5 * (1.0 + math.cos(math.pi * progress))
    else:  # linear
        shape = 1.0 - progress
    return cfg.min_lr_ratio + (1.0 - cfg.min_lr_ratio) * shape


def build_scheduler(
    optimizer: torch.optim.Optimizer, total_steps: int, cfg: OptimConfig
) -> torch.optim.lr_scheduler.LambdaLR:
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: lr_multiplier(step, total_steps, cfg)
    )


def set_schedule_length(
    scheduler: torch.optim.lr_scheduler.LRScheduler, total_steps: int, cfg: OptimConfig
) -> None:
    """Give the schedule the run's length once it is known (the training loop counts the
    usable prompts after the models are built): the warmup ratio and the decay follow it.
    The current learning rate is set from this schedule at the current step."""
    assert isinstance(scheduler, torch.optim.lr_scheduler.LambdaLR)  # build_scheduler's
    scheduler.lr_lambdas = [
        lambda step: lr_multiplier(step, total_steps, cfg) for _ in scheduler.base_lrs
    ]
    factor = lr_multiplier(scheduler.last_epoch, total_steps, cfg)
    for group, base in zip(scheduler.optimizer.param_groups, scheduler.base_lrs, strict=True):
        group["lr"] = base * factor
    scheduler._last_lr = [group["lr"] for group in scheduler.optimizer.param_groups]

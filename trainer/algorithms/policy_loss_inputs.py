"""The one input and the one output of every policy loss (trainer.algorithms.policy_loss)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import Tensor

from trainer.config.algorithm_section import PolicyLossOptions, RolloutCorrectionConfig
from trainer.config.schema import LossAggMode

LOG_RATIO_LIMIT = 20.0  # log-ratios are clamped to [-20, 20] before exp, as verl


@dataclass(frozen=True)
class PolicyLossInputs:
    logprobs: Tensor  # (B, T) current policy, carries the gradient
    old_logprobs: Tensor  # (B, T) policy that generated the rollout (no gradient)
    advantages: Tensor  # (B, T)
    response_mask: Tensor  # (B, T) float 0/1
    clip_ratio_low: float  # ratio is clipped below at 1 - clip_ratio_low
    clip_ratio_high: float  # ... and above at 1 + clip_ratio_high (DAPO clip-higher)
    # ppo: dual-clip bound for negative advantages, > 1; dppo_*: truncation of the ratio.
    clip_ratio_c: float
    loss_agg_mode: LossAggMode
    norm_constant: float | None  # seq-mean-token-sum-norm divisor (max response length)
    options: PolicyLossOptions = field(default_factory=PolicyLossOptions)
    # (B, T) truncated importance weights of the rollout correction: multiply token losses.
    rollout_is_weights: Tensor | None = None
    # bypass_mode computes its weights and rejections inside the loss.
    rollout_correction: RolloutCorrectionConfig | None = None
    generator: torch.Generator | None = None  # clip_cov's random pick of tokens

    def __post_init__(self) -> None:
        shape = tuple(self.logprobs.shape)
        for name in ("old_logprobs", "advantages", "response_mask", "rollout_is_weights"):
            value = getattr(self, name)
            if value is not None and tuple(value.shape) != shape:
                raise ValueError(
                    f"{name} shape {tuple(value.shape)} must equal logprobs shape {shape}."
                )


@dataclass
class PolicyLossOutput:
    loss: Tensor  # 0-dim, differentiable w.r.t. logprobs
    clipfrac: Tensor  # 0-dim detached: share of valid tokens where the clip is active
    clipfrac_lower: Tensor  # 0-dim detached: share where the dual clip (A < 0) is active
    ppo_kl: Tensor  # 0-dim detached: masked mean of old - new log-prob
    metrics: dict[str, float] = field(default_factory=dict)  # loss-specific, namespaced


PolicyLossFn = Callable[[PolicyLossInputs], PolicyLossOutput]


def weighted(token_losses: Tensor, inputs: PolicyLossInputs) -> Tensor:
    """Token losses times the rollout correction's weights, when there are any (verl)."""
    if inputs.rollout_is_weights is None:
        return token_losses
    return token_losses * inputs.rollout_is_weights

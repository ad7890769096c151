"""Policy-gradient losses: one input type, one output type, one closed registry.

`POLICY_LOSSES[cfg.actor.policy_loss](inputs)` is the only call the actor makes.
Both losses follow verl's `compute_policy_loss_vanilla` / `compute_policy_loss_gspo`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

import torch
from torch import Tensor

from trainer.algorithms.aggregation import aggregate_loss
from trainer.algorithms.stats import masked_mean
from trainer.config.schema import LossAggMode, PolicyLoss

LOG_RATIO_LIMIT = 20.0  # log-ratios are clamped to [-20, 20] before exp, as verl


@dataclass(frozen=True)
class PolicyLossInputs:
    logprobs: Tensor  # (B, T) current policy, carries the gradient
    old_logprobs: Tensor  # (B, T) policy that generated the rollout (no gradient)
    advantages: Tensor  # (B, T)
    response_mask: Tensor  # (B, T) float 0/1
    clip_ratio_low: float  # ratio is clipped below at 1 - clip_ratio_low
    clip_ratio_high: float  # ... and above at 1 + clip_ratio_high (DAPO clip-higher)
    clip_ratio_c: float  # dual-clip bound for negative advantages (ppo only), > 1
    loss_agg_mode: LossAggMode
    norm_constant: float | None  # seq-mean-token-sum-norm divisor (max response length)

    def __post_init__(self) -> None:
        shape = tuple(self.logprobs.shape)
        for name in ("old_logprobs", "advantages", "response_mask"):
            other = tuple(getattr(self, name).shape)
            if other != shape:
                raise ValueError(f"{name} shape {other} must equal logprobs shape {shape}.")


@dataclass
class PolicyLossOutput:
    loss: Tensor  # 0-dim, differentiable w.r.t. logprobs
    clipfrac: Tensor  # 0-dim detached: share of valid tokens where the clip is active
    clipfrac_lower: Tensor  # 0-dim detached: share where the dual clip (A < 0) is active
    ppo_kl: Tensor  # 0-dim detached: masked mean of old - new log-prob


PolicyLossFn = Callable[[PolicyLossInputs], PolicyLossOutput]


def ppo_loss(inputs: PolicyLossInputs) -> PolicyLossOutput:
    """Token-level clipped surrogate with separate low/high clips and dual clip.

    loss_t = max(-A r, -A clip(r, 1 - eps_low, 1 + eps_high)); where A < 0 it is
    further capped at -A c, so a huge ratio on a bad token cannot dominate.
    """
    if inputs.clip_ratio_c <= 1.0:
        raise ValueError(f"clip_ratio_c must be > 1 for dual-clip PPO, got {inputs.clip_ratio_c}.")
    mask, adv = inputs.response_mask, inputs.advantages
    log_ratio = (inputs.logprobs - inputs.old_logprobs).clamp(-LOG_RATIO_LIMIT, LOG_RATIO_LIMIT)
    ratio = torch.exp(log_ratio)  # (B, T)
    unclipped = -adv * ratio  # (B, T)
    clipped = -adv * ratio.clamp(1 - inputs.clip_ratio_low, 1 + inputs.clip_ratio_high)  # (B, T)
    clip_loss = torch.maximum(unclipped, clipped)  # (B, T)
    dual_bound = -adv * inputs.clip_ratio_c  # (B, T)
    negative = adv < 0  # (B, T)
    token_losses = torch.where(negative, torch.minimum(dual_bound, clip_loss), clip_loss)
    loss = aggregate_loss(token_losses, mask, inputs.loss_agg_mode, inputs.norm_constant)
    with torch.no_grad():
        clipfrac = masked_mean((clipped > unclipped).to(ratio.dtype), mask)
        clipfrac_lower = masked_mean(((clip_loss > dual_bound) & negative).to(ratio.dtype), mask)
        ppo_kl = masked_mean(-log_ratio, mask)
    return PolicyLossOutput(loss, clipfrac, clipfrac_lower, ppo_kl)


def gspo_loss(inputs: PolicyLossInputs) -> PolicyLossOutput:
    """GSPO (arXiv 2507.18071): one length-normalised ratio per sequence.

    s_i = exp(mean_t (logp - old)) over the valid tokens of sequence i. Each token
    uses sg[s_i] * exp(logp - sg[logp]) (GSPO-token): the value is s_i and the
    gradient is s_i * grad logp_t, which under seq-mean-token-mean equals the
    paper's sequence-level gradient. No dual clip; `clipfrac_lower` is 0.
    verl forces seq-mean-token-mean here; we honour `loss_agg_mode` (recommend it).
    """
    mask, adv, logprobs = inputs.response_mask, inputs.advantages, inputs.logprobs
    log_ratio = logprobs - inputs.old_logprobs  # (B, T)
    seq_log_ratio = masked_mean(log_ratio.detach(), mask, dim=-1)  # (B,)
    seq_log_ratio = seq_log_ratio.clamp(-LOG_RATIO_LIMIT, LOG_RATIO_LIMIT)
    ratio = torch.exp(logprobs - logprobs.detach() + seq_log_ratio.unsqueeze(-1))  # (B, T)
    unclipped = -adv * ratio  # (B, T)
    clipped = -adv * ratio.clamp(1 - inputs.clip_ratio_low, 1 + inputs.clip_ratio_high)  # (B, T)
    token_losses = torch.maximum(unclipped, clipped)  # (B, T)
    loss = aggregate_loss(token_losses, mask, inputs.loss_agg_mode, inputs.norm_constant)
    with torch.no_grad():
        clipfrac = masked_mean((clipped > unclipped).to(ratio.dtype), mask)
        ppo_kl = masked_mean(-log_ratio, mask)
    return PolicyLossOutput(loss, clipfrac, torch.zeros_like(clipfrac), ppo_kl)


POLICY_LOSSES: Mapping[PolicyLoss, PolicyLossFn] = MappingProxyType(
    {"ppo": ppo_loss, "gspo": gspo_loss}
)

"""Advantage estimators: one input type, one output type, one closed registry.

Every estimator takes an `AdvantageInputs` and returns `(advantages, returns)`, both
(B, T) and zero on masked-out tokens, so the trainer calls
`ADVANTAGE_ESTIMATORS[cfg.algorithm.adv_estimator](inputs)` without special cases.
The maths follows verl's `core_algos` (see docs/REFERENCE "Algorithms as verl
implements them"); deviations are called out where they happen.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import torch
from torch import Tensor

from trainer.algorithms.advantage_inputs import (
    GRPO_EPSILON,
    AdvantageFn,
    AdvantageInputs,
    float_mask,
    group_stats,
)
from trainer.algorithms.outcome_baselines import gdpo, gpg, grpo_passk, opo, remax
from trainer.algorithms.stats import masked_whiten
from trainer.algorithms.token_baseline import (
    optimal_token_baseline,
    tir_optimal_token_baseline,
)
from trainer.config.schema import AdvantageEstimator


def scores_to_token_rewards(scores: Tensor, response_mask: Tensor) -> Tensor:
    """Place each response's scalar score on its last valid response token.

    scores: (B,); response_mask: (B, T) -> (B, T). A response with no valid token
    gets no reward at all (verl would write it onto the last padding position).
    """
    dtype = scores.dtype if scores.is_floating_point() else torch.get_default_dtype()
    batch, length = response_mask.shape
    positions = torch.arange(length, device=response_mask.device).expand(batch, length)  # (B, T)
    last = torch.where(response_mask.bool(), positions, -1).amax(dim=-1)  # (B,)
    rewards = torch.zeros(batch, length, dtype=dtype, device=response_mask.device)  # (B, T)
    rows = torch.nonzero(last >= 0).squeeze(-1)  # (B',)
    rewards[rows, last[rows]] = scores.to(dtype)[rows]
    return rewards


def grpo(inputs: AdvantageInputs) -> tuple[Tensor, Tensor]:
    """A_i = (s_i - mean_g) / (std_g + 1e-6), or s_i - mean_g without std (Dr.GRPO).

    A group of one has mean 0 and std 1 (verl), so its advantage is its own score.
    """
    with torch.no_grad():
        mask = float_mask(inputs)  # (B, T)
        scores = inputs.token_rewards.sum(dim=-1)  # (B,)
        _, std, size, deviation = group_stats(scores, inputs.group_index)
        single = size == 1
        deviation = torch.where(single, scores, deviation)  # mean 0 for a group of one
        std = torch.where(single, torch.ones_like(std), std)
        adv = deviation / (std + GRPO_EPSILON) if inputs.norm_by_std else deviation  # (B,)
        adv_tokens = adv.unsqueeze(-1) * mask  # (B, T)
    return adv_tokens, adv_tokens


def rloo(inputs: AdvantageInputs) -> tuple[Tensor, Tensor]:
    """Leave-one-out baseline: A_i = s_i - mean_{j != i} s_j = (s_i - mean_g) * n / (n - 1).

    A group of one has no baseline and gets advantage 0, as verl's rloo_vectorized (its
    loop version leaves the raw score, which trains a lone response on its reward alone).
    """
    with torch.no_grad():
        mask = float_mask(inputs)  # (B, T)
        scores = inputs.token_rewards.sum(dim=-1)  # (B,)
        _, _, size, deviation = group_stats(scores, inputs.group_index)
        adv = torch.where(size > 1, deviation * size / (size - 1).clamp(min=1), 0.0)  # (B,)
        adv_tokens = adv.unsqueeze(-1) * mask  # (B, T)
    return adv_tokens, adv_tokens


def gae(inputs: AdvantageInputs) -> tuple[Tensor, Tensor]:
    """Generalised advantage estimation with a critic, backwards over response tokens.

    delta_t = r_t + gamma V_{t+1} - V_t; A_t = delta_t + gamma lam A_{t+1}. A masked
    position carries the next value and advantage through unchanged (verl), so padding
    between valid tokens is skipped. returns = A + V before A is whitened over the
    valid tokens of the batch.
    """
    if inputs.values is None:
        raise ValueError(
            "adv_estimator='gae' needs critic values (AdvantageInputs.values is None); "
            "compute values with the critic or choose grpo, rloo, reinforce_plus_plus or "
            "reinforce_plus_plus_baseline."
        )
    with torch.no_grad():
        rewards, values = inputs.token_rewards, inputs.values.to(inputs.token_rewards.dtype)
        mask = float_mask(inputs)  # (B, T)
        valid = mask.bool()  # (B, T)
        next_value = rewards.new_zeros(rewards.shape[0])  # (B,)
        last_gae = rewards.new_zeros(rewards.shape[0])  # (B,)
        advantages = torch.empty_like(rewards)  # (B, T)
        for t in reversed(range(rewards.shape[1])):
            delta = rewards[:, t] + inputs.gamma * next_value - values[:, t]  # (B,)
            gae_t = delta + inputs.gamma * inputs.lam * last_gae  # (B,)
            next_value = torch.where(valid[:, t], values[:, t], next_value)
            last_gae = torch.where(valid[:, t], gae_t, last_gae)
            advantages[:, t] = last_gae
        returns = (advantages + values) * mask  # (B, T)
        advantages = masked_whiten(advantages, mask) * mask  # (B, T)
    return advantages, returns


def reinforce_plus_plus(inputs: AdvantageInputs) -> tuple[Tensor, Tensor]:
    """Discounted return of token rewards, whitened over the batch's valid tokens.

    A masked position (a tool's output inside a multi-turn episode) is skipped: the
    running return passes through it unchanged, so the reward at the end reaches the
    earlier turns (verl 0.9.1). Trailing padding holds no reward, so nothing leaks back.
    """
    with torch.no_grad():
        rewards = inputs.token_rewards
        mask = float_mask(inputs)  # (B, T)
        running = rewards.new_zeros(rewards.shape[0])  # (B,)
        returns = torch.empty_like(rewards)  # (B, T)
        for t in reversed(range(rewards.shape[1])):
            stepped = rewards[:, t] + inputs.gamma * running  # (B,)
            returns[:, t] = stepped * mask[:, t]
            running = torch.where(mask[:, t].bool(), stepped, running)
        advantages = masked_whiten(returns, mask) * mask  # (B, T)
    return advantages, returns


def reinforce_plus_plus_baseline(inputs: AdvantageInputs) -> tuple[Tensor, Tensor]:
    """Score minus its group mean (a group of one: mean 0), broadcast, whitened over the batch."""
    with torch.no_grad():
        mask = float_mask(inputs)  # (B, T)
        scores = inputs.token_rewards.sum(dim=-1)  # (B,)
        _, _, size, deviation = group_stats(scores, inputs.group_index)
        centred = torch.where(size == 1, scores, deviation)  # (B,)
        advantages = masked_whiten(centred.unsqueeze(-1) * mask, mask) * mask  # (B, T)
    return advantages, advantages


# verl registers loop and vectorized twins of GRPO and RLOO under two names; they compute
# the same numbers, and ours are vectorized already, so both names share one function.
ADVANTAGE_ESTIMATORS: Mapping[AdvantageEstimator, AdvantageFn] = MappingProxyType(
    {
        "grpo": grpo,
        "grpo_vectorized": grpo,
        "gae": gae,
        "rloo": rloo,
        "rloo_vectorized": rloo,
        "reinforce_plus_plus": reinforce_plus_plus,
        "reinforce_plus_plus_baseline": reinforce_plus_plus_baseline,
        "grpo_passk": grpo_passk,
        "remax": remax,
        "opo": opo,
        "gpg": gpg,
        "gdpo": gdpo,
        "optimal_token_baseline": optimal_token_baseline,
        "tir_optimal_token_baseline": tir_optimal_token_baseline,
    }
)


def compute_advantages(name: AdvantageEstimator, inputs: AdvantageInputs) -> tuple[Tensor, Tensor]:
    """Run the estimator `name`; an unknown name is a ValueError listing the allowed ones."""
    if name not in ADVANTAGE_ESTIMATORS:
        raise ValueError(
            f"Unknown advantage estimator {name!r}; allowed: {sorted(ADVANTAGE_ESTIMATORS)}."
        )
    return ADVANTAGE_ESTIMATORS[name](inputs)

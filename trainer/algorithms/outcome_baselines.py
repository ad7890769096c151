"""Outcome estimators beyond GRPO/RLOO: one scalar reward per response, a baseline each.

Each follows verl 0.9.1's `core_algos` function of the same name, checked against
verl's recorded outputs (tests/data/verl/algorithm_outputs-0.9.1.json).
"""

from __future__ import annotations

import torch
from torch import Tensor

from trainer.algorithms.advantage_inputs import (
    GRPO_EPSILON,
    AdvantageInputs,
    float_mask,
    group_stats,
)
from trainer.algorithms.stats import masked_whiten


def _broadcast(adv: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
    tokens = adv.unsqueeze(-1) * mask  # (B, T)
    return tokens, tokens


def grpo_passk(inputs: AdvantageInputs) -> tuple[Tensor, Tensor]:
    """Pass@k (arXiv 2503.19595): only the best response of a group learns, by
    r_max - r_second, divided by the group std (+1e-6) when norm_by_std.

    A group needs two responses; ties for the best go to the one torch.topk returns,
    as in verl.
    """
    with torch.no_grad():
        mask = float_mask(inputs)  # (B, T)
        scores = inputs.token_rewards.sum(dim=-1)  # (B,)
        advantages = torch.zeros_like(scores)  # (B,)
        for group in torch.unique(inputs.group_index):
            rows = torch.nonzero(inputs.group_index == group).squeeze(-1)  # (k,)
            if rows.numel() < 2:
                raise ValueError(
                    "adv_estimator='grpo_passk' needs at least 2 responses per prompt "
                    f"(rollout.n >= 2); group {int(group)} has {rows.numel()}."
                )
            group_scores = scores[rows]
            top, top_rows = torch.topk(group_scores, 2)
            gap = top[0] - top[1]
            if inputs.norm_by_std:
                gap = gap / (torch.std(group_scores) + GRPO_EPSILON)
            advantages[rows[top_rows[0]]] = gap
        return _broadcast(advantages, mask)


def opo(inputs: AdvantageInputs) -> tuple[Tensor, Tensor]:
    """OPO (arXiv 2505.23585): the baseline is the length-weighted mean score of the
    group, sum(|y_j| s_j) / sum(|y_j|); a group of one has baseline 0 (verl)."""
    with torch.no_grad():
        mask = float_mask(inputs)  # (B, T)
        scores = inputs.token_rewards.sum(dim=-1)  # (B,)
        lengths = mask.sum(dim=-1)  # (B,)
        _, inverse, counts = torch.unique(
            inputs.group_index, return_inverse=True, return_counts=True
        )
        weighted = scores.new_zeros(counts.shape).index_add_(0, inverse, lengths * scores)
        total = scores.new_zeros(counts.shape).index_add_(0, inverse, lengths)
        baseline = torch.where(counts > 1, weighted / total, 0.0)  # (G,)
        return _broadcast(scores - baseline[inverse], mask)


def gpg(inputs: AdvantageInputs) -> tuple[Tensor, Tensor]:
    """GPG (arXiv 2504.02546): alpha * (s_i - mean_g), alpha = B / (number of nonzero
    scores), which rescales the batch when most responses score 0. A group of one has
    mean 0 (verl); the std is not used (verl's f_norm is 1)."""
    with torch.no_grad():
        mask = float_mask(inputs)  # (B, T)
        scores = inputs.token_rewards.sum(dim=-1)  # (B,)
        alpha = scores.shape[0] / torch.count_nonzero(scores).clamp(min=1)
        _, _, size, deviation = group_stats(scores, inputs.group_index)
        centred = torch.where(size == 1, scores, deviation)  # (B,)
        return _broadcast(alpha * centred, mask)


def remax(inputs: AdvantageInputs) -> tuple[Tensor, Tensor]:
    """ReMax (arXiv 2310.10505): reward-to-go minus the reward of the greedy response to
    the same prompt. The rollout step decodes and scores that response
    (`AdvantageInputs.reward_baselines`)."""
    if inputs.reward_baselines is None:
        raise ValueError(
            "adv_estimator='remax' needs the greedy response's reward per prompt "
            "(AdvantageInputs.reward_baselines is None); the rollout step computes it."
        )
    with torch.no_grad():
        mask = float_mask(inputs)  # (B, T)
        returns = (inputs.token_rewards * mask).flip(-1).cumsum(-1).flip(-1)  # (B, T)
        baseline = inputs.reward_baselines.to(returns.dtype)  # (B,)
        # Zero on masked tokens (a multi-turn episode's tool output) like every estimator.
        return (returns - baseline.unsqueeze(-1)) * mask, returns * mask


def gdpo(inputs: AdvantageInputs) -> tuple[Tensor, Tensor]:
    """GDPO (arXiv 2601.05242) over the one reward RL Studio scores: the GRPO advantage
    of the score, whitened over the batch's valid tokens.

    verl can also normalise several reward components separately
    (`algorithm.gdpo_reward_keys`); RL Studio's reward is one score, so that key is
    refused by the verl translator, and with one component the two agree.
    """
    from trainer.algorithms.advantages import grpo  # the registry module imports this one

    mask = float_mask(inputs)  # (B, T)
    normalised, _ = grpo(inputs)
    with torch.no_grad():
        advantages = masked_whiten(normalised, mask) * mask
    return advantages, advantages

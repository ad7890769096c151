"""Optimal token baselines: a baseline per response position, weighted by path variance.

For the responses of one prompt, B_t = sum_i G_{i,t} W_{i,t} / sum_i W_{i,t}, where G is
the reward-to-go and W_{i,t} = sum_{j<=t} (1 - 2 pi_j + sum_v pi_v^2) accumulates the
squared norm of the score function along the path (pi_j: probability of the sampled token
under the rollout policy). With rollout-correction weights rho, each term is scaled by
rho^2. The math follows verl 0.9.1's compute_optimal_token_baseline_advantage and its
multi-turn twin.
"""

from __future__ import annotations

import torch
from torch import Tensor

from trainer.algorithms.advantage_inputs import AdvantageInputs, float_mask

OTB_EPSILON = 1e-8  # added to the denominator, as verl


def _path_weights(inputs: AdvantageInputs, mask: Tensor) -> tuple[Tensor, Tensor]:
    """(reward-to-go, cumulative path variance), both (B, T)."""
    if inputs.old_logprobs is None or inputs.sum_pi_squared is None:
        raise ValueError(
            "the optimal token baselines need the rollout policy's token log-probs and "
            "sum of squared probabilities (AdvantageInputs.old_logprobs / sum_pi_squared); "
            "the training step computes both for these estimators."
        )
    returns = (inputs.token_rewards * mask).flip(-1).cumsum(-1).flip(-1)  # (B, T)
    per_token = 1 - 2 * inputs.old_logprobs.exp() + inputs.sum_pi_squared  # (B, T)
    if inputs.rollout_is_weights is not None:
        per_token = per_token * inputs.rollout_is_weights**2
    return returns, (per_token * mask).cumsum(-1)


def _groups(group_index: Tensor, keep: Tensor) -> list[Tensor]:
    """Row indices of each group, in first-appearance order, over rows where `keep`."""
    rows = torch.nonzero(keep).squeeze(-1)
    order: dict[int, list[int]] = {}
    for row in rows.tolist():
        order.setdefault(int(group_index[row]), []).append(row)
    return [torch.tensor(r, device=group_index.device) for r in order.values()]


def _zero_tail(baselines: Tensor, rows: Tensor, lengths: Tensor) -> None:
    """Past the second-longest response of the group, the longest one has nobody to
    compare with: its baseline there is 0 (verl's handle_zero_tail, on by default)."""
    group_lengths = lengths[rows]
    ordered = torch.sort(group_lengths).values
    longest, second = int(ordered[-1]), int(ordered[-2])
    at_longest = torch.nonzero(group_lengths == longest).squeeze(-1)
    if at_longest.numel() == 1 and longest > second:
        baselines[rows[at_longest[0]], second:] = 0.0


def optimal_token_baseline(inputs: AdvantageInputs) -> tuple[Tensor, Tensor]:
    """A_t = G_t - B_t with B_t averaged over the group at each response position."""
    with torch.no_grad():
        mask = float_mask(inputs)  # (B, T)
        returns, weights = _path_weights(inputs, mask)
        lengths = mask.sum(-1)  # (B,)
        baselines = torch.zeros_like(returns)  # (B, T)
        keep = torch.ones_like(lengths, dtype=torch.bool)
        for rows in _groups(inputs.group_index, keep):
            if rows.numel() == 1:
                continue  # no baseline: the advantage is the return
            m = mask[rows]  # (N, T)
            numerator = (returns[rows] * weights[rows] * m).sum(0)  # (T,)
            baselines[rows] = numerator / ((weights[rows] * m).sum(0) + OTB_EPSILON)
            _zero_tail(baselines, rows, lengths)
        return (returns - baselines) * mask, returns * mask


def tir_optimal_token_baseline(inputs: AdvantageInputs) -> tuple[Tensor, Tensor]:
    """The same baseline over each response's trained tokens packed left: in a
    multi-turn episode the tool-output spans are masked out, and the k-th trained token
    of one episode is compared with the k-th trained token of the others."""
    with torch.no_grad():
        mask = float_mask(inputs)  # (B, T)
        returns, weights = _path_weights(inputs, mask)
        lengths = mask.sum(-1).long()  # (B,)
        width = int(lengths.max()) if lengths.numel() else 0
        packed_w = weights.new_zeros(lengths.shape[0], width)  # (B, L)
        packed_g = torch.zeros_like(packed_w)  # (B, L)
        valid = mask.bool()
        for row in range(lengths.shape[0]):
            packed_w[row, : lengths[row]] = weights[row, valid[row]]
            packed_g[row, : lengths[row]] = returns[row, valid[row]]
        baselines = torch.zeros_like(packed_g)  # (B, L)
        for rows in _groups(inputs.group_index, lengths > 0):
            if rows.numel() == 1:
                continue
            # As verl: sums over the whole packed width, zeros past a response's end.
            b_star = (packed_g[rows] * packed_w[rows]).sum(0) / (
                packed_w[rows].sum(0) + OTB_EPSILON
            )
            baselines[rows] = b_star.to(baselines.dtype)
            _zero_tail(baselines, rows, lengths)
        packed_adv = packed_g - baselines  # (B, L)
        advantages = torch.zeros_like(returns)  # (B, T)
        for row in range(lengths.shape[0]):
            advantages[row, valid[row]] = packed_adv[row, : lengths[row]]
        return advantages * mask, returns * mask

"""DAPO (arXiv 2503.14476) helpers: dynamic-sampling filter and overlong shaping."""

from __future__ import annotations

import torch
from torch import Tensor


def groups_with_reward_spread(scores: Tensor, group_index: Tensor) -> Tensor:
    """Keep mask (B,) bool: False for every response of a group whose scores are all equal.

    Such groups give zero group-relative advantage, hence no gradient. A group of one
    is kept, as verl's DAPO trainer does (`std > 0 or len == 1`): it has no spread to
    measure and GRPO gives it its raw score as advantage.
    """
    _, inverse, counts = torch.unique(group_index, return_inverse=True, return_counts=True)
    values = scores.to(torch.float64)  # (B,)
    high = values.new_full(counts.shape, -torch.inf).scatter_reduce(0, inverse, values, "amax")
    low = values.new_full(counts.shape, torch.inf).scatter_reduce(0, inverse, values, "amin")
    keep_group = (high > low) | (counts == 1)  # (G,)
    return keep_group[inverse]


def overlong_penalty(
    response_lengths: Tensor, max_len: int, buffer_len: int, factor: float
) -> Tensor:
    """Soft overlong punishment (B,): min(-(L - (max_len - buffer_len)) / buffer_len * factor, 0).

    0 up to `max_len - buffer_len` tokens, then a linear ramp reaching -factor at
    `max_len`.
    """
    if buffer_len <= 0 or buffer_len > max_len:
        raise ValueError(
            f"overlong buffer_len must be in [1, max_len={max_len}], got {buffer_len}."
        )
    exceed = response_lengths.to(torch.get_default_dtype()) - (max_len - buffer_len)  # (B,)
    return (-exceed / buffer_len * factor).clamp(max=0.0)

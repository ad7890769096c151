"""Clipped value (critic) loss, as verl's `compute_value_loss`."""

from __future__ import annotations

import torch
from torch import Tensor

from trainer.algorithms.aggregation import aggregate_loss
from trainer.algorithms.stats import masked_mean
from trainer.config.schema import LossAggMode


def value_loss(
    values: Tensor,
    old_values: Tensor,
    returns: Tensor,
    mask: Tensor,
    cliprange: float,
    agg_mode: LossAggMode,
    norm_constant: float | None = None,
) -> tuple[Tensor, Tensor]:
    """0.5 * agg(max((V - R)^2, (clip(V, V_old - c, V_old + c) - R)^2)).

    values: (B, T) current critic predictions (differentiable); old_values: (B, T)
    predictions at rollout time; returns: (B, T) targets. Returns the 0-dim loss and
    the detached share of valid tokens where the clipped error is the larger one.
    """
    clipped_values = torch.clamp(values, old_values - cliprange, old_values + cliprange)  # (B, T)
    losses = (values - returns).square()  # (B, T)
    clipped_losses = (clipped_values - returns).square()  # (B, T)
    loss_mat = torch.maximum(losses, clipped_losses)  # (B, T)
    loss = 0.5 * aggregate_loss(loss_mat, mask, agg_mode, norm_constant)
    with torch.no_grad():
        clipfrac = masked_mean((clipped_losses > losses).to(values.dtype), mask)
    return loss, clipfrac

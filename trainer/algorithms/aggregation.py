"""Turning a (B, T) matrix of token losses into one scalar, as verl's `agg_loss`.

- token-mean: sum over all valid tokens / number of valid tokens (verl's default).
- seq-mean-token-sum: each sequence's token sum, averaged over sequences.
- seq-mean-token-mean: each sequence's token mean, averaged over sequences.
- seq-mean-token-sum-norm (Dr.GRPO): each sequence's token sum divided by a constant
  (`norm_constant`, the max response length; default the mask width T), averaged
  over sequences. This is current verl (`seq_losses / loss_scale_factor`, then a sum
  over the local batch divided by its size) and the Dr.GRPO paper's
  `sum(dim=-1) / MAX_TOKENS` then `.mean()`. verl <= 0.4 summed over sequences
  instead of averaging (a loss B times larger); we follow the paper and current verl.

"Averaged over sequences" divides by the rows that hold a response token, as verl
0.9.1: a fully masked row (a sequence the rollout correction rejected) neither adds to
the loss nor dilutes it. Micro-batches stay additive: a mini-batch's loss is the sum of
its micro-batches' losses, each weighted by its share of those rows
(trainer.training.update.micro_weight).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from torch import Tensor

from trainer.algorithms.stats import masked_mean, masked_sum
from trainer.config.schema import LossAggMode

# (loss_mat (B, T), mask (B, T), norm_constant) -> 0-dim loss
ReduceFn = Callable[[Tensor, Tensor, float | None], Tensor]


@dataclass(frozen=True)
class Aggregation:
    """One aggregation mode and the traits the update loop reads instead of its name."""

    reduce: ReduceFn
    # A micro-batch's share of its mini-batch's loss: its valid tokens (True) or its rows.
    weighs_by_tokens: bool
    # Divides by the response width: micro-batches keep the padded width whole.
    needs_response_width: bool


def token_mean(loss_mat: Tensor, mask: Tensor, norm_constant: float | None) -> Tensor:
    return masked_mean(loss_mat, mask)


def _row_mean(per_row: Tensor, mask: Tensor) -> Tensor:
    """(B,) -> (): the mean over rows with at least one valid token (0 when none)."""
    return per_row.sum() / live_rows(mask).clamp(min=1)


def live_rows(mask: Tensor) -> Tensor:
    """0-dim count of rows with at least one valid token."""
    return (mask.sum(dim=-1) > 0).sum()


def seq_mean_token_sum(loss_mat: Tensor, mask: Tensor, norm_constant: float | None) -> Tensor:
    return _row_mean(masked_sum(loss_mat, mask, dim=-1), mask)  # (B,) -> ()


def seq_mean_token_mean(loss_mat: Tensor, mask: Tensor, norm_constant: float | None) -> Tensor:
    counts = mask.to(loss_mat.dtype).sum(dim=-1).clamp(min=1)  # (B,)
    return _row_mean(masked_sum(loss_mat, mask, dim=-1) / counts, mask)


def seq_mean_token_sum_norm(loss_mat: Tensor, mask: Tensor, norm_constant: float | None) -> Tensor:
    constant = float(mask.shape[-1]) if norm_constant is None else norm_constant
    if constant <= 0:
        raise ValueError(
            f"norm_constant must be > 0 for seq-mean-token-sum-norm, got {constant}; "
            "pass the max response length."
        )
    return _row_mean(masked_sum(loss_mat, mask, dim=-1) / constant, mask)


LOSS_AGGREGATIONS: Mapping[LossAggMode, Aggregation] = MappingProxyType(
    {
        "token-mean": Aggregation(token_mean, weighs_by_tokens=True, needs_response_width=False),
        "seq-mean-token-sum": Aggregation(
            seq_mean_token_sum, weighs_by_tokens=False, needs_response_width=False
        ),
        "seq-mean-token-mean": Aggregation(
            seq_mean_token_mean, weighs_by_tokens=False, needs_response_width=False
        ),
        "seq-mean-token-sum-norm": Aggregation(
            seq_mean_token_sum_norm, weighs_by_tokens=False, needs_response_width=True
        ),
    }
)


def aggregation(mode: LossAggMode) -> Aggregation:
    """The registry entry of `mode`; an unknown mode is a ValueError naming the allowed."""
    if mode not in LOSS_AGGREGATIONS:
        raise ValueError(
            f"Unknown loss_agg_mode {mode!r}; allowed: {', '.join(LOSS_AGGREGATIONS)}."
        )
    return LOSS_AGGREGATIONS[mode]


def aggregate_loss(
    loss_mat: Tensor, mask: Tensor, mode: LossAggMode, norm_constant: float | None = None
) -> Tensor:
    """Aggregate token losses (B, T) under `mask` (B, T) into a 0-dim tensor.

    `norm_constant` is read only by seq-mean-token-sum-norm; keep it constant over
    training (the configured max response length) to reproduce Dr.GRPO.
    """
    return aggregation(mode).reduce(loss_mat, mask, norm_constant)

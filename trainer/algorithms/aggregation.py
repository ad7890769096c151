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

"Averaged over sequences" always divides by B, all rows: a fully masked row adds 0
(a token mean over no tokens is 0 here, NaN in old verl). This keeps micro-batches
additive: a mini-batch's loss is the row-weighted sum of its micro-batches' losses.
"""

from __future__ import annotations

from torch import Tensor

from trainer.algorithms.stats import masked_mean, masked_sum
from trainer.config.schema import LossAggMode


def aggregate_loss(
    loss_mat: Tensor, mask: Tensor, mode: LossAggMode, norm_constant: float | None = None
) -> Tensor:
    """Aggregate token losses (B, T) under `mask` (B, T) into a 0-dim tensor.

    `norm_constant` is read only by seq-mean-token-sum-norm; keep it constant over
    training (the configured max response length) to reproduce Dr.GRPO.
    """
    if mode == "token-mean":
        return masked_mean(loss_mat, mask)
    seq_sums = masked_sum(loss_mat, mask, dim=-1)  # (B,)
    if mode == "seq-mean-token-sum":
        return seq_sums.mean()
    if mode == "seq-mean-token-mean":
        counts = mask.to(loss_mat.dtype).sum(dim=-1).clamp(min=1)  # (B,)
        return (seq_sums / counts).mean()
    if mode == "seq-mean-token-sum-norm":
        constant = float(mask.shape[-1]) if norm_constant is None else norm_constant
        if constant <= 0:
            raise ValueError(
                f"norm_constant must be > 0 for seq-mean-token-sum-norm, got {constant}; "
                "pass the max response length."
            )
        return (seq_sums / constant).mean()
    raise ValueError(
        f"Unknown loss_agg_mode {mode!r}; allowed: token-mean, seq-mean-token-sum, "
        "seq-mean-token-mean, seq-mean-token-sum-norm."
    )

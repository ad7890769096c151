"""Masked reductions over response tokens (verl's `torch_functional` helpers).

Masks are float 0/1 (or bool) tensors broadcastable to `x`. Padded positions are
selected away with `torch.where` rather than multiplied by zero, so a NaN or inf
sitting in padding cannot leak into a statistic.
"""

from __future__ import annotations

import torch
from torch import Tensor


def masked_sum(x: Tensor, mask: Tensor, dim: int | None = None) -> Tensor:
    """Sum of `x` where `mask` is set; over all elements when `dim` is None."""
    picked = torch.where(mask.bool(), x, torch.zeros((), dtype=x.dtype, device=x.device))
    return picked.sum() if dim is None else picked.sum(dim=dim)


def masked_mean(x: Tensor, mask: Tensor, dim: int | None = None) -> Tensor:
    """Mean of `x` over the masked-in elements; 0 where nothing is masked in.

    verl adds 1e-8 to the count; clamping it instead gives the same value whenever
    the count is >= 1 and an exact 0 (not 0/1e-8 noise) when it is empty.
    """
    count = mask.to(x.dtype).sum() if dim is None else mask.to(x.dtype).sum(dim=dim)
    return masked_sum(x, mask, dim) / count.clamp(min=1e-8)


def masked_var(x: Tensor, mask: Tensor, unbiased: bool = True) -> Tensor:
    """Variance of `x` over all masked-in elements (a 0-dim tensor).

    With `unbiased` the Bessel correction n / (n - 1) is applied, as verl does;
    that needs at least two masked-in elements.
    """
    mean = masked_mean(x, mask)
    variance = masked_mean((x - mean) ** 2, mask)
    if unbiased:
        count = float(mask.to(x.dtype).sum())
        if count < 2:
            raise ValueError(
                f"masked_var(unbiased=True) needs at least 2 masked-in elements, got {count:g}; "
                "pass unbiased=False or a larger batch."
            )
        variance = variance * (count / (count - 1))
    return variance


def masked_whiten(x: Tensor, mask: Tensor, shift_mean: bool = True) -> Tensor:
    """(x - mean) / sqrt(var + 1e-8) with statistics over the masked-in elements.

    With `shift_mean=False` the mean is added back (only the scale changes).
    Values at masked-out positions are transformed too; callers mask them.
    """
    mean = masked_mean(x, mask)
    var = masked_var(x, mask)
    whitened = (x - mean) * torch.rsqrt(var + 1e-8)
    if not shift_mean:
        whitened = whitened + mean
    return whitened

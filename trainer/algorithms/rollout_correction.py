"""Rollout correction (verl 0.9.1's rollout_corr_helper): the engine that sampled the
responses and the trainer disagree a little on log-probs (other kernels, precision, a
stale policy). Importance weights pi_old / pi_rollout reweigh the loss (truncated, or
zeroed outside a band), and rejection drops tokens or sequences whose divergence is too
large. Pure tensor functions; the training step applies them (trainer.training.step).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from trainer.algorithms.stats import masked_mean, masked_sum
from trainer.config.algorithm_section import RolloutCorrectionConfig, RolloutIsLevel

SAFETY_BOUND = 20.0  # log-ratios are clamped to this before exp, as verl


@dataclass
class Correction:
    weights: Tensor | None  # (B, T) detached importance weights, or None (no rollout_is)
    response_mask: Tensor  # (B, T) the mask with rejected tokens removed
    metrics: dict[str, float]  # rollout_corr/*


def is_threshold_bounds(spec: float | str) -> tuple[float, float | None]:
    """`2.0` -> (2.0, None): truncate; `"0.5_2.0"` -> (2.0, 0.5): zero outside the band."""
    if isinstance(spec, bool):
        raise ValueError("rollout_is_threshold must be a number or 'lower_upper', not a boolean.")
    text = str(spec).strip()
    lower_text, _, upper_text = text.rpartition("_") if "_" in text else ("", "", text)
    try:
        upper = float(upper_text)
        lower = float(lower_text) if lower_text else None
    except ValueError as exc:
        raise ValueError(
            f"rollout_is_threshold {spec!r}: expected a number or 'lower_upper'."
        ) from exc
    if upper <= 0 or (lower is not None and not 0 < lower <= upper):
        raise ValueError(
            f"rollout_is_threshold {spec!r}: bounds must be positive with lower <= upper."
        )
    return upper, lower


def rs_thresholds(options: list[str], spec: float | str) -> dict[str, tuple[float | None, float]]:
    """Per criterion (lower, upper); k1 criteria bound the ratio on both sides (a single
    u means 1/u_u), the others have an upper bound only."""
    parts = [p.strip() for p in str(spec).split(",") if p.strip()]
    if len(parts) not in (1, len(options)):
        raise ValueError(
            f"rollout_rs_threshold {spec!r}: give one threshold for all criteria or one per "
            f"criterion ({len(options)})."
        )
    parts = parts * len(options) if len(parts) == 1 else parts
    bounds: dict[str, tuple[float | None, float]] = {}
    for option, part in zip(options, parts, strict=True):
        if option.endswith("k1"):
            low_text, _, up_text = part.rpartition("_")
            upper = float(up_text)
            lower = float(low_text) if low_text else 1.0 / upper
            if not 0 < lower <= upper:
                raise ValueError(
                    f"rollout_rs_threshold {part!r} for {option}: need 0 < lower <= upper."
                )
            bounds[option] = (lower, upper)
        else:
            if "_" in part or float(part) <= 0:
                raise ValueError(
                    f"rollout_rs_threshold {part!r} for {option}: one positive upper bound."
                )
            bounds[option] = (None, float(part))
    return bounds


def importance_weights(
    log_ratio: Tensor,
    mask: Tensor,
    level: RolloutIsLevel,
    threshold: float | str,
    batch_normalize: bool,
) -> Tensor:
    """(B, T) weights exp(log pi_old - log pi_rollout) per token or per sequence (the sum
    over its tokens), truncated at the upper bound or zeroed outside the band; detached."""
    upper, lower = is_threshold_bounds(threshold)
    with torch.no_grad():
        if level == "token":
            raw = torch.exp(log_ratio.clamp(-SAFETY_BOUND, SAFETY_BOUND))  # (B, T)
        else:
            seq = masked_sum(log_ratio, mask, dim=-1).unsqueeze(-1)  # (B, 1)
            raw = torch.exp(seq.clamp(-SAFETY_BOUND, SAFETY_BOUND)).expand_as(log_ratio)
        raw = raw * mask
        if lower is None:
            weights = raw.clamp(max=upper)
        else:
            weights = torch.where((raw >= lower) & (raw <= upper), raw, torch.zeros_like(raw))
        if batch_normalize:
            if level == "token":
                mean = masked_mean(weights, mask)
            else:
                rows = (mask.sum(dim=-1) > 0).to(weights.dtype)  # (B,)
                mean = (masked_mean(weights, mask, dim=-1) * rows).sum() / rows.sum().clamp(
                    min=1e-8
                )
            if mean > 1e-8:
                weights = weights / mean
    return weights


def rejection_mask(
    log_ratio: Tensor, mask: Tensor, criteria: str, threshold: float | str
) -> Tensor:
    """(B, T) mask without the tokens (token_*) or whole sequences (seq_*) whose
    divergence estimate breaks its bound; every criterion must pass."""
    options = list(dict.fromkeys(o.strip() for o in criteria.split(",") if o.strip()))
    bounds = rs_thresholds(options, threshold)
    safe = log_ratio.clamp(-SAFETY_BOUND, SAFETY_BOUND)
    estimates = {"k1": -safe, "k2": 0.5 * safe**2, "k3": torch.exp(safe) - 1.0 - safe}
    keep = torch.ones_like(mask, dtype=torch.bool)
    for option in options:
        lower, upper = bounds[option]
        scope, _, kind = option.rpartition("_")
        token_stat = estimates[kind]  # (B, T)
        if scope == "token":
            stat = token_stat
        elif scope == "seq_sum":
            stat = masked_sum(token_stat, mask, dim=-1).unsqueeze(-1)  # (B, 1)
        elif scope == "seq_mean":
            stat = masked_mean(token_stat, mask, dim=-1).unsqueeze(-1)
        else:  # seq_max; a row with no token has max 0
            peak = token_stat.masked_fill(~mask.bool(), -torch.inf).amax(dim=-1)
            stat = torch.where(torch.isinf(peak), torch.zeros_like(peak), peak).unsqueeze(-1)
        if lower is None:
            passed = stat <= upper
        else:  # k1 is -log r; its bounds are on log r's range
            passed = (stat >= math.log(lower)) & (stat <= math.log(upper))
        keep &= passed.expand_as(mask)
    return mask * keep.to(mask.dtype)


def correct(
    old_logprobs: Tensor, rollout_logprobs: Tensor, mask: Tensor, cfg: RolloutCorrectionConfig
) -> Correction:
    """Weights and rejections of `cfg` from the trainer's and the engine's log-probs."""
    if not mask.bool().any():
        raise ValueError("rollout correction needs at least one response token in the batch.")
    log_ratio = (old_logprobs - rollout_logprobs).detach()  # (B, T)
    weights = None
    metrics: dict[str, float] = {}
    if cfg.rollout_is is not None:
        weights = importance_weights(
            log_ratio,
            mask,
            cfg.rollout_is,
            cfg.rollout_is_threshold,
            cfg.rollout_is_batch_normalize,
        )
        metrics["rollout_corr/rollout_is_mean"] = float(masked_mean(weights, mask))
    kept = mask
    if cfg.rollout_rs is not None:
        assert cfg.rollout_rs_threshold is not None  # the config validates this
        kept = rejection_mask(log_ratio, mask, cfg.rollout_rs, cfg.rollout_rs_threshold)
        metrics["rollout_corr/rollout_rs_masked_fraction"] = float(masked_mean(1 - kept, mask))
    metrics["rollout_corr/kl"] = float(masked_mean(-log_ratio, mask))  # KL(rollout || old), k1
    return Correction(weights, kept, metrics)

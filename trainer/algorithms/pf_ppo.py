"""PF-PPO (arXiv 2409.06957, verl 0.9.1's compute_pf_ppo_reweight_data): resample the
batch with replacement, each response weighted by its score, so the update sees more of
the responses whose reward is most informative."""

from __future__ import annotations

import torch
from torch import Tensor

from trainer.config.algorithm_section import PfPpoReweight


def pf_ppo_weights(scores: Tensor, method: PfPpoReweight, weight_pow: float) -> Tensor:
    """(B,) sampling weights from the (B,) scores; never exactly zero (verl adds 1e-8)."""
    if method == "pow":
        weights = scores.abs().pow(weight_pow)
    elif method == "max_min":
        extreme = (scores == scores.max()) | (scores == scores.min())
        weights = extreme.to(scores.dtype)
    elif method == "max_random":
        weights = torch.where(scores == scores.max(), 0.4, 0.1).to(scores.dtype)
    else:
        raise ValueError(
            f"algorithm.pf_ppo.reweight_method={method!r}; allowed: pow, max_min, max_random."
        )
    return (weights + 1e-8).clamp(min=1e-8)


def pf_ppo_rows(
    scores: Tensor, method: PfPpoReweight, weight_pow: float, generator: torch.Generator
) -> Tensor:
    """(B,) row indices of the resampled batch: B draws with replacement. With a generator
    seeded like verl's global one, the same rows as verl."""
    with torch.no_grad():
        weights = pf_ppo_weights(scores, method, weight_pow)
        return torch.multinomial(weights, scores.shape[0], replacement=True, generator=generator)

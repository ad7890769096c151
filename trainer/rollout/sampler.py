"""Drawing the next token from logits: temperature, top-k and top-p, and the sampling
log-probability of what was drawn (trainer.rollout.hf's module docstring says which)."""

from __future__ import annotations

import torch

from trainer.config.sampling import SamplingParams


def _filter_logits(scaled: torch.Tensor, top_k: int, top_p: float) -> torch.Tensor:
    """Mask logits outside the top-k / nucleus set with -inf. `scaled`: (B, V)."""
    if 0 < top_k < scaled.shape[-1]:
        kth = torch.topk(scaled, top_k, dim=-1).values[:, -1:]
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    if top_p < 1.0:
        sorted_logits, sorted_idx = torch.sort(scaled, dim=-1, descending=True)
        cum = sorted_logits.softmax(-1).cumsum(-1)
        # Drop a token when the mass before it already reaches top_p (the top one always stays).
        drop_sorted = (cum - sorted_logits.softmax(-1)) >= top_p
        drop = drop_sorted.scatter(-1, sorted_idx, drop_sorted)
        scaled = scaled.masked_fill(drop, float("-inf"))
    return scaled


def sample_next(
    logits: torch.Tensor, sampling: SamplingParams, generator: torch.Generator | None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Next tokens and their log-probabilities (see the module docstring). logits: (A, V)."""
    if sampling.temperature == 0:
        tokens = logits.argmax(-1)
        logp = logits.log_softmax(-1)
    else:
        scaled = logits / sampling.temperature
        logp = scaled.log_softmax(-1)
        probs = _filter_logits(scaled, sampling.top_k, sampling.top_p).softmax(-1)
        tokens = torch.multinomial(probs, 1, generator=generator).squeeze(-1)
    return tokens, logp.gather(-1, tokens[:, None]).squeeze(-1)

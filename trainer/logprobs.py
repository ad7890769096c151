"""Per-token log-probabilities (and entropy) of response tokens under a model."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from trainer.algorithms.entropy import entropy_from_logits
from trainer.batch import RolloutBatch


@dataclass
class TokenStats:
    logprobs: Tensor  # (B, R)
    entropy: Tensor | None  # (B, R)


def response_logits(model: nn.Module, batch: RolloutBatch, temperature: float) -> Tensor:
    """Logits that predicted each response token, divided by the sampling temperature.

    Only the last R+1 positions go through the LM head (`logits_to_keep`): the
    prompt's logits are never needed, which saves the vocab projection on them.
    """
    width_r = batch.response_width
    out = model(
        input_ids=batch.input_ids,
        attention_mask=batch.attention_mask,
        position_ids=batch.position_ids,
        logits_to_keep=width_r + 1,
        use_cache=False,
    )
    logits = out.logits[:, :-1, :].float()  # (B, R, V): position t predicts token t+1
    if temperature > 0 and temperature != 1.0:
        logits = logits / temperature
    return logits


def response_token_stats(
    model: nn.Module, batch: RolloutBatch, temperature: float, with_entropy: bool
) -> TokenStats:
    logits = response_logits(model, batch, temperature)  # (B, R, V)
    targets = batch.input_ids[:, batch.prompt_width :]  # (B, R)
    picked = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1)  # (B, R)
    logprobs = picked - torch.logsumexp(logits, dim=-1)
    entropy = entropy_from_logits(logits) if with_entropy else None
    return TokenStats(logprobs=logprobs, entropy=entropy)


@torch.no_grad()
def compute_logprobs(
    model: nn.Module, batch: RolloutBatch, temperature: float, micro_batch_size: int
) -> Tensor:
    """Log-probs of every response token, in micro-batches, without gradients."""
    parts = [
        response_token_stats(
            model, batch.select(slice(i, i + micro_batch_size)), temperature, False
        ).logprobs
        for i in range(0, batch.size, micro_batch_size)
    ]
    return torch.cat(parts, dim=0)

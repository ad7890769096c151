"""Small GRPO-shaped batches and a tiny random model for trainer unit tests."""

from __future__ import annotations

import torch

from trainer.batch import RolloutBatch, build_batch
from trainer.models.demo import build_model, build_tokenizer


def tiny_model() -> tuple[torch.nn.Module, int, int]:
    """(model, vocabulary size, pad id) of a 2-layer, 64-wide random Llama."""
    torch.manual_seed(0)
    tokenizer = build_tokenizer()
    model = build_model(tokenizer, "tiny", hidden_size=64, num_layers=2)
    return model, len(tokenizer), int(tokenizer.pad_token_id)


def grpo_batch(
    vocab: int,
    pad: int,
    seed: int,
    groups: int,
    n: int,
    prompt_lengths: tuple[int, int],
    response_lengths: tuple[int, int],
    with_advantages: bool = False,
) -> RolloutBatch:
    """`groups` groups of n responses behind prompts of different lengths; lengths are
    drawn from [low, high) (a response may be empty when low is 0)."""
    g = torch.Generator().manual_seed(seed)

    def tokens(low: int, high: int) -> list[int]:
        length = int(torch.randint(low, high, (1,), generator=g))
        return [5 + int(t) for t in torch.randint(0, vocab - 10, (length,), generator=g)]

    prompts, responses, index = [], [], []
    for group in range(groups):
        prompt = tokens(*prompt_lengths)
        for _ in range(n):
            prompts.append(prompt)
            responses.append(tokens(*response_lengths))
            index.append(group)
    batch = build_batch(prompts, responses, index, [0.0] * len(prompts), pad)
    if with_advantages:
        batch.advantages = torch.randn(batch.response_mask.shape, generator=g)
        batch.advantages = batch.advantages * batch.response_mask
    return batch

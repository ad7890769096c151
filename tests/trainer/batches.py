"""Small GRPO-shaped batches and a tiny random model for trainer unit tests."""

from __future__ import annotations

import pytest
import torch

from trainer.config.schema import ActorConfig
from trainer.demo.model import build_model, build_tokenizer
from trainer.training.batch import RolloutBatch, build_batch
from trainer.training.update import update_actor


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


def assert_update_same_either_layout(
    model: torch.nn.Module, batch: RolloutBatch, micro_batch_size: int
) -> None:
    """One update with `actor.pack_shared_prompts` off and on (which picks block packing or
    shared prefixes) gives the same metrics and weights; the model is left as it was."""
    start = {k: v.clone() for k, v in model.state_dict().items()}
    after = []
    for packed in (False, True):
        model.load_state_dict(start)
        cfg = ActorConfig.model_validate(
            {
                "micro_batch_size": micro_batch_size,
                "ppo_mini_batch_size": 4,
                "pack_shared_prompts": packed,
            }
        )
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        metrics = update_actor(
            model, optimizer, batch, cfg, 1.0, batch.size, 1.0, torch.Generator().manual_seed(0)
        )
        after.append((metrics, {k: v.clone() for k, v in model.state_dict().items()}))
    model.load_state_dict(start)
    (m_a, s_a), (m_b, s_b) = after
    for key in ("actor/pg_loss", "actor/entropy", "actor/grad_norm"):
        assert m_a[key] == pytest.approx(m_b[key], abs=1e-5)
    for key in s_a:
        torch.testing.assert_close(s_a[key], s_b[key], atol=1e-5, rtol=1e-5)

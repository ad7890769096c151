"""Shared-prompt packing scores exactly what the padded layout scores."""

from __future__ import annotations

import pytest
import torch

from tests.trainer import batches
from tests.trainer.batches import assert_update_same_either_layout, tiny_model
from trainer.training.batch import RolloutBatch, build_batch
from trainer.training.logprobs import compute_logprobs, response_token_stats
from trainer.training.packing import pack_shared_prompts


@pytest.fixture(scope="module")
def tiny() -> tuple[torch.nn.Module, int, int]:
    return tiny_model()


def grpo_batch(vocab: int, pad: int, seed: int, groups: int = 4, n: int = 3) -> RolloutBatch:
    """Groups of n responses (some empty, lengths differ) behind prompts of different length."""
    return batches.grpo_batch(vocab, pad, seed, groups, n, (2, 12), (0, 8))


def test_layout_of_one_group() -> None:
    batch = build_batch([[7, 8], [7, 8]], [[1, 2, 3], [4]], [0, 0], [0.0, 0.0], pad_token_id=0)
    packed = pack_shared_prompts(
        batch.input_ids, batch.attention_mask, batch.response_mask, batch.group_index, 2
    )
    assert packed.input_ids.tolist() == [[7, 8, 1, 2, 3, 4]]
    assert packed.position_ids.tolist() == [[0, 1, 2, 3, 4, 2]]
    # The second response's only token sees the prompt and itself, not the first response.
    assert packed.attention_mask[0, 0, 5].tolist() == [True, True, False, False, False, True]
    # Token j of a response is predicted by the position before it.
    assert packed.source_cols.tolist() == [1, 2, 3, 1]
    assert list(zip(packed.batch_rows.tolist(), packed.batch_cols.tolist(), strict=True)) == [
        (0, 0),
        (0, 1),
        (0, 2),
        (1, 0),
    ]


def test_rows_with_equal_group_but_different_prompts_are_not_merged() -> None:
    batch = build_batch([[7, 8], [9]], [[1], [2]], [0, 0], [0.0, 0.0], pad_token_id=0)
    packed = pack_shared_prompts(
        batch.input_ids, batch.attention_mask, batch.response_mask, batch.group_index, 2
    )
    assert packed.input_ids.shape[0] == 2


@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_logprobs_entropy_and_gradients_match_the_padded_layout(
    tiny: tuple[torch.nn.Module, int, int], temperature: float
) -> None:
    model, vocab, pad = tiny
    batch = grpo_batch(vocab, pad, seed=1)
    mask = batch.response_mask
    results = []
    for packed in (False, True):
        model.zero_grad()
        stats = response_token_stats(model, batch, temperature, True, packed=packed)
        assert stats.entropy is not None
        (stats.logprobs * mask).sum().backward()
        grads = [p.grad.clone() for p in model.parameters() if p.grad is not None]
        results.append((stats.logprobs * mask, stats.entropy * mask, grads))
    (lp_a, h_a, g_a), (lp_b, h_b, g_b) = results
    torch.testing.assert_close(lp_a, lp_b, atol=1e-5, rtol=0)
    torch.testing.assert_close(h_a, h_b, atol=1e-5, rtol=0)
    for a, b in zip(g_a, g_b, strict=True):
        torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-4)


def test_compute_logprobs_packed_matches(tiny: tuple[torch.nn.Module, int, int]) -> None:
    model, vocab, pad = tiny
    batch = grpo_batch(vocab, pad, seed=2, groups=5)
    plain = compute_logprobs(model, batch, 1.0, micro_batch_size=4)
    packed = compute_logprobs(model, batch, 1.0, micro_batch_size=4, packed=True)
    torch.testing.assert_close(plain * batch.response_mask, packed * batch.response_mask)


def test_an_update_step_is_the_same_packed_or_not(tiny: tuple[torch.nn.Module, int, int]) -> None:
    model, vocab, pad = tiny
    batch = grpo_batch(vocab, pad, seed=3)
    batch.advantages = torch.randn(batch.size, 1, generator=torch.Generator().manual_seed(0))
    batch.advantages = batch.advantages * batch.response_mask
    assert_update_same_either_layout(model, batch, micro_batch_size=5)

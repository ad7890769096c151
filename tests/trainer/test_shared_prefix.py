"""The shared-prefix layout scores exactly what the padded layout scores, and the layout
choice picks it for long responses only."""

from __future__ import annotations

import pytest
import torch

from tests.trainer import batches
from tests.trainer.batches import assert_update_same_either_layout, tiny_model
from trainer.training.batch import RolloutBatch
from trainer.training.logprobs import response_logits, response_token_stats
from trainer.training.shared_prefix import (
    layout_costs,
    length_buckets,
    prefers_shared_prefix,
    shared_prefix_layout,
    shared_prefix_response_logits,
)


@pytest.fixture(scope="module")
def tiny() -> tuple[torch.nn.Module, int, int]:
    return tiny_model()


def long_batch(vocab: int, pad: int, seed: int, groups: int = 3, n: int = 4) -> RolloutBatch:
    """Groups whose responses are long next to their prompts (some shorter, one empty),
    long enough that the shared-prefix layout pays for its extra forwards."""
    batch = batches.grpo_batch(vocab, pad, seed, groups, n, (2, 9), (60, 100))
    # one empty response: only its padding is left
    batch.attention_mask[1, batch.prompt_width :] = 0
    batch.response_mask[1] = 0
    return batch


def multi_turn(batch: RolloutBatch) -> RolloutBatch:
    """Tool tokens inside responses: attention 1 (real context), response_mask 0."""
    batch.response_mask[:, 3:6] = 0
    return batch


def test_long_responses_choose_shared_prefix_and_short_ones_block_packing() -> None:
    # 8 x 128-token responses behind a 28-token prompt: one 1,052-token packed sequence.
    packed, prefix = layout_costs([28] * 8, [128] * 8, [0] * 8)
    assert prefix < packed
    # 8 x ~6-token responses (longest 16): packing scores fewer positions.
    packed, prefix = layout_costs([28] * 8, [6, 4, 16, 5, 6, 7, 3, 5], [0] * 8)
    assert packed < prefix


def test_short_answers_in_a_large_micro_batch_keep_block_packing() -> None:
    # The bench's short workload: 64 rows, 8 groups, 12-token prompts, ~6-token answers.
    # The shared-prefix layout scores fewer positions here but runs a prompt pass and a
    # response pass for one packed forward; measured slower, so its forwards are charged.
    answers = [7, 5, 6, 4, 6, 5, 3, 6] * 8
    packed, prefix = layout_costs([12] * 64, answers, [row // 8 for row in range(64)])
    assert packed < prefix


def test_the_layout_shares_each_prompt_and_trims_to_the_longest_response(
    tiny: tuple[torch.nn.Module, int, int],
) -> None:
    _, vocab, pad = tiny
    batch = long_batch(vocab, pad, seed=0)
    layout = shared_prefix_layout(batch)
    assert layout.prompt_ids.shape[0] == 3
    assert layout.row_prompt.tolist() == [0] * 4 + [1] * 4 + [2] * 4
    longest = int(batch.attention_mask[:, batch.prompt_width :].sum(dim=1).max())
    assert layout.width == longest
    assert layout.response_ids.shape == (12, longest - 1)
    assert prefers_shared_prefix(batch)


@pytest.mark.parametrize("turns", ["single", "multi"])
def test_logits_match_the_padded_layout(tiny: tuple[torch.nn.Module, int, int], turns: str) -> None:
    model, vocab, pad = tiny
    batch = long_batch(vocab, pad, seed=1)
    if turns == "multi":
        batch = multi_turn(batch)
    real = batch.attention_mask[:, batch.prompt_width :].bool()
    with torch.no_grad():
        padded = response_logits(model, batch, 1.0)  # (B, R, V)
        shared = shared_prefix_response_logits(model, batch)  # (B, L, V)
    width = shared.shape[1]
    assert not real[:, width:].any()
    torch.testing.assert_close(shared[real[:, :width]], padded[:, :width][real[:, :width]])


@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_stats_and_gradients_match_the_padded_layout(
    tiny: tuple[torch.nn.Module, int, int], temperature: float
) -> None:
    model, vocab, pad = tiny
    batch = multi_turn(long_batch(vocab, pad, seed=2))
    mask = batch.response_mask
    assert prefers_shared_prefix(batch)
    results = []
    for packed in (False, True):
        model.zero_grad()
        stats = response_token_stats(model, batch, temperature, True, packed=packed)
        assert stats.entropy is not None and stats.logprobs.shape == mask.shape
        (stats.logprobs * mask).sum().backward()
        grads = [p.grad.clone() for p in model.parameters() if p.grad is not None]
        results.append((stats.logprobs * mask, stats.entropy * mask, grads))
    (lp_a, h_a, g_a), (lp_b, h_b, g_b) = results
    torch.testing.assert_close(lp_a, lp_b, atol=1e-5, rtol=0)
    torch.testing.assert_close(h_a, h_b, atol=1e-5, rtol=0)
    assert len(g_a) == len(g_b)
    for a, b in zip(g_a, g_b, strict=True):
        torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-4)


def test_an_update_is_the_same_with_shared_prefixes(tiny: tuple[torch.nn.Module, int, int]):
    model, vocab, pad = tiny
    batch = multi_turn(long_batch(vocab, pad, seed=3, groups=4))
    g = torch.Generator().manual_seed(0)
    batch.advantages = torch.randn(batch.size, 1, generator=g) * batch.response_mask
    assert_update_same_either_layout(model, batch, micro_batch_size=8)


def test_rows_are_bucketed_by_real_length_only_when_it_saves_work() -> None:
    # completions at their limit: one forward
    assert length_buckets([128] * 8, 28) == [list(range(8))]
    # a few short ones among long ones get their own narrower forward(s)
    buckets = length_buckets([128] * 6 + [20, 10], 28)
    assert buckets[0] == list(range(6))
    assert sorted(row for bucket in buckets[1:] for row in bucket) == [6, 7]
    # small differences are not worth another forward
    assert length_buckets([30, 29, 28, 27], 28) == [[0, 1, 2, 3]]

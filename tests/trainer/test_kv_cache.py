"""The preallocated KV cache holds exactly what transformers' dynamic cache holds."""

from __future__ import annotations

import pytest
import torch
from transformers.cache_utils import DynamicCache, DynamicLayer

from tests.trainer.batches import tiny_model
from trainer.rollout.kv_cache import PreallocatedLayer, preallocate


def states(g: torch.Generator, batch: int, length: int) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(batch, 2, length, 4, generator=g), torch.randn(
        batch, 2, length, 4, generator=g
    )


# 6: outgrown below, before rows are dropped; 64: rows dropped inside the first buffer
@pytest.mark.parametrize("capacity", [6, 64])
def test_updates_row_selection_and_growth_match_the_dynamic_layer(capacity: int) -> None:
    g = torch.Generator().manual_seed(0)
    dynamic = DynamicLayer()
    dynamic.update(*states(g, 3, 5))
    grown = PreallocatedLayer(dynamic.keys, dynamic.values, capacity=capacity)
    for step in range(4):
        k, v = states(g, grown.keys.shape[0], 1)
        expected = dynamic.update(k, v)
        got = grown.update(k, v)
        for a, b in zip(got, expected, strict=True):
            assert torch.equal(a, b)
        if step == 1:  # a row finishes: both drop it
            keep = torch.tensor([0, 2])
            dynamic.batch_select_indices(keep)
            grown.batch_select_indices(keep)
    assert grown.get_seq_length() == dynamic.get_seq_length() == 9


# Finished rows leave one or several at a time, from anywhere in the batch (rows are moved
# down in place); a selection that repeats or reorders rows gathers into a new buffer.
@pytest.mark.parametrize(
    "selections",
    [
        [[1, 2, 3, 4, 5, 6, 7], [0, 2, 5], [1]],  # the first row, then gaps, then all but one
        [[0, 1, 2, 3, 4, 5, 6, 7], [0, 3, 4, 6, 7], [0, 1, 2, 3]],  # all kept, then the tail
        [[0, 0, 1, 1, 2, 2, 3, 3], [7, 6, 5, 4, 3, 2, 1, 0]],  # repeated, then reversed
    ],
)
def test_dropping_rows_keeps_each_kept_row_exactly(selections: list[list[int]]) -> None:
    g = torch.Generator().manual_seed(1)
    dynamic = DynamicLayer()
    dynamic.update(*states(g, 8, 3))
    grown = PreallocatedLayer(dynamic.keys, dynamic.values, capacity=16)
    for keep in selections:
        index = torch.tensor(keep)
        dynamic.batch_select_indices(index)
        grown.batch_select_indices(index)
        k, v = states(g, len(keep), 1)
        for a, b in zip(grown.update(k, v), dynamic.update(k, v), strict=True):
            assert torch.equal(a, b)


def test_decoding_with_it_gives_the_dynamic_cache_logits() -> None:
    model, vocab, _ = tiny_model()
    ids = torch.randint(5, vocab - 5, (2, 6), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        logits = []
        for swap in (False, True):
            out = model(input_ids=ids, use_cache=True)
            cache = out.past_key_values
            assert isinstance(cache, DynamicCache)
            if swap:
                cache = preallocate(cache, capacity=8)
                assert all(isinstance(layer, PreallocatedLayer) for layer in cache.layers)
            token = out.logits[:, -1].argmax(-1, keepdim=True)
            steps = []
            for _ in range(4):
                out = model(input_ids=token, past_key_values=cache, use_cache=True)
                steps.append(out.logits[:, -1])
                token = out.logits[:, -1].argmax(-1, keepdim=True)
            logits.append(torch.stack(steps))
    torch.testing.assert_close(logits[0], logits[1], atol=1e-6, rtol=0)

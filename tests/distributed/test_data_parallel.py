"""Splitting a batch across ranks and into micro-batches (trainer.training.data_parallel)."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import pytest
import torch

from tests.trainer import batches
from tests.trainer.batches import tiny_model
from trainer.config.schema import ActorConfig
from trainer.training.batch import RolloutBatch
from trainer.training.data_parallel import (
    SINGLE_PROCESS,
    map_rows,
    micro_batch_cost,
    plan_micro_batches,
    row_lengths,
    shard_range,
    trim_padding,
)
from trainer.training.logprobs import response_token_stats
from trainer.training.update import update_actor


@dataclass(frozen=True)
class RankView:
    """One rank's view of a world of ranks, for the functions that never communicate
    (planning and map_rows); reductions are tested with real ranks (test_equivalence)."""

    rank: int
    world_size: int

    def all_reduce_sum(self, values: torch.Tensor) -> torch.Tensor:
        raise AssertionError("planning must not communicate")


@pytest.fixture(scope="module")
def tiny() -> tuple[torch.nn.Module, int, int]:
    return tiny_model()


def grpo_batch(vocab: int, pad: int, seed: int, groups: int = 5, n: int = 3) -> RolloutBatch:
    """Groups of n responses of different lengths behind prompts of different lengths."""
    return batches.grpo_batch(vocab, pad, seed, groups, n, (2, 14), (1, 12), with_advantages=True)


def test_shards_cover_every_row_once_and_differ_by_at_most_one_row() -> None:
    for rows in range(0, 12):
        for world in (1, 2, 3, 5):
            shards = [shard_range(rows, world, r) for r in range(world)]
            assert [i for s in shards for i in s] == list(range(rows))
            assert max(map(len, shards)) - min(map(len, shards)) <= 1


def test_one_process_by_count_cuts_the_single_process_trainers_micro_batches(tiny) -> None:
    _, vocab, pad = tiny
    batch = grpo_batch(vocab, pad, seed=1)  # 15 rows
    plan = plan_micro_batches(batch, SINGLE_PROCESS, micro_batch_size=4)
    assert plan == [
        (list(range(0, 4)), 1.0),
        (list(range(4, 8)), 1.0),
        (list(range(8, 12)), 1.0),
        (list(range(12, 15)), 1.0),
    ]


def test_every_rank_runs_as_many_micro_batches_as_the_busiest_with_zero_weight_dummies(
    tiny,
) -> None:
    _, vocab, pad = tiny
    batch = grpo_batch(vocab, pad, seed=1).select(slice(0, 5))  # 3 rows on rank 0, 2 on rank 1
    plans = [plan_micro_batches(batch, RankView(r, 2), micro_batch_size=1) for r in range(2)]
    assert [len(p) for p in plans] == [3, 3]
    assert [rows for rows, active in plans[1] if active] == [[3], [4]]
    assert plans[1][-1][1] == 0.0  # the dummy carries no weight
    real = sorted(i for plan in plans for rows, active in plan if active for i in rows)
    assert real == list(range(5))


@pytest.mark.parametrize("packed", [False, True])
def test_a_token_budget_bounds_every_micro_batch_and_keeps_every_row(tiny, packed) -> None:
    _, vocab, pad = tiny
    batch = grpo_batch(vocab, pad, seed=2, groups=6, n=4)
    lengths = row_lengths(batch)
    budget = 60
    for world in (1, 2):
        seen: list[int] = []
        counts = set()
        for rank in range(world):
            plan = plan_micro_batches(batch, RankView(rank, world), 99, budget, packed)
            counts.add(len(plan))
            for rows, active in plan:
                if active:
                    seen += rows
                    assert len(rows) == 1 or micro_batch_cost(rows, lengths, packed) <= budget
        assert sorted(seen) == list(range(batch.size))
        assert len(counts) == 1  # ranks stay in step


def test_trimming_padding_leaves_log_probs_unchanged(tiny) -> None:
    model, vocab, pad = tiny
    batch = grpo_batch(vocab, pad, seed=3).select(torch.tensor([0, 4, 9]))
    trimmed = trim_padding(batch)
    assert trimmed.input_ids.shape[1] < batch.input_ids.shape[1]
    with torch.no_grad():
        full = response_token_stats(model, batch, 1.0, False).logprobs * batch.response_mask
        cut = response_token_stats(model, trimmed, 1.0, False).logprobs * trimmed.response_mask
    width = cut.shape[1]
    torch.testing.assert_close(cut, full[:, :width], atol=1e-5, rtol=0)
    assert float(full[:, width:].abs().sum()) == 0.0


def test_rank_shards_of_map_rows_put_together_give_the_single_process_values(tiny) -> None:
    model, vocab, pad = tiny
    batch = grpo_batch(vocab, pad, seed=4)

    def forward(micro: RolloutBatch) -> torch.Tensor:
        return response_token_stats(model, micro, 1.0, False).logprobs * micro.response_mask

    with torch.no_grad():
        alone = map_rows(batch, SINGLE_PROCESS, 4, None, False, forward)
        shards = [map_rows(batch, RankView(r, 2), 3, 50, False, forward) for r in range(2)]
    torch.testing.assert_close(torch.cat(shards), alone, atol=1e-5, rtol=0)


@pytest.mark.parametrize("packed", [False, True])
def test_an_update_by_token_budget_matches_the_update_by_count(tiny, packed) -> None:
    model, vocab, pad = tiny
    batch = grpo_batch(vocab, pad, seed=5, groups=4, n=4)
    results = []
    for budget in (None, 48):
        cfg = ActorConfig(
            micro_batch_size=4,
            max_tokens_per_micro_batch=budget,
            pack_shared_prompts=packed,
            use_kl_loss=True,
        )
        batch.ref_logprobs = torch.zeros_like(batch.response_mask)
        trained = copy.deepcopy(model).train()
        # SGD: Adam would magnify float rounding on near-zero gradients (m / sqrt(v)).
        optimizer = torch.optim.SGD(trained.parameters(), lr=0.1)
        metrics = update_actor(
            trained, optimizer, batch, cfg, 1.0, 8, 16.0, torch.Generator().manual_seed(0)
        )
        results.append((metrics, trained))
    (by_count, a), (by_tokens, b) = results
    for key in ("actor/pg_loss", "actor/entropy", "actor/kl_loss", "actor/grad_norm"):
        assert by_tokens[key] == pytest.approx(by_count[key], abs=1e-5), key
    for (name, p), q in zip(a.named_parameters(), b.parameters(), strict=True):
        torch.testing.assert_close(p, q, atol=1e-6, rtol=0, msg=name)

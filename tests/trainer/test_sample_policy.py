"""The rollout sampling policy: which samples a step stores and which carry token data."""

from __future__ import annotations

import math
import random

import torch

from trainer.reporting.sample_policy import (
    GroupSummary,
    SamplePolicy,
    choose_groups,
    summarize_groups,
    train_records,
    val_records,
)
from trainer.rewards.contract import RewardResult
from trainer.rollout.collect import PromptItem, Sample
from trainer.rollout.engine import Completion

N = 4  # group size


class CharDecoder:
    def batch_decode(self, sequences, **kwargs):
        return [chr(ord("a") + ids[0] % 26) for ids in sequences]


def make_samples(group_scores: list[list[float]], errors: dict[int, int] | None = None):
    """One group per entry; `errors[g]` = how many of group g's samples errored."""
    samples = []
    for g, scores in enumerate(group_scores):
        prompt = PromptItem(f"0:{g}", [1, 2, 3], f"prompt {g}", "arith", str(g))
        for j, s in enumerate(scores):
            failed = j < (errors or {}).get(g, 0)
            ids = [g, j, 7]
            samples.append(
                Sample(
                    prompt=prompt,
                    group=g,
                    completion=Completion(g, ids, [-0.5, -1.0, -0.25], f"r{g}.{j}", "eos"),
                    reward=RewardResult(score=0.0 if failed else s, error="boom" if failed else ""),
                    score=0.0 if failed else s,
                )
            )
    return samples


def policy(k: int = 8, fraction: float = 0.0, seed: int = 0, cap: int = 4096) -> SamplePolicy:
    return SamplePolicy(k, fraction, cap, seed)


def groups_of(records) -> list[str]:
    return list(dict.fromkeys(r.group_id for r in records))


def test_best_and_worst_groups_are_always_kept_even_over_the_budget():
    scores = [[0.5] * N, [1.0] * N, [0.0] * N, [0.6] * N, [0.4] * N]
    chosen = choose_groups(summarize_groups(make_samples(scores)), 1, random.Random(0))
    assert chosen == [1, 2]


def test_groups_stay_whole_and_fill_the_budget_with_random_ones():
    samples = make_samples([[0.1 * g] * N for g in range(10)])
    records = train_records(samples, [0.0] * len(samples), None, policy(k=16), step=3)
    assert len(records) == 16
    groups = groups_of(records)
    assert groups[:2] == ["0:9", "0:0"]
    for g in groups:
        assert sum(r.group_id == g for r in records) == N
    assert all(r.step == 3 and r.split == "train" for r in records)


def test_errored_groups_come_right_after_best_and_worst():
    scores = [[0.0] * N, [1.0] * N] + [[0.5] * N] * 6
    samples = make_samples(scores, errors={5: 1, 6: 3})
    records = train_records(samples, [0.0] * len(samples), None, policy(k=12), 1)
    assert groups_of(records) == ["0:1", "0:0", "0:6", "0:5"]  # best, worst, most errors
    assert sum(r.error == "boom" for r in records) == 4


def test_errored_groups_cannot_flood_the_store():
    samples = make_samples([[0.5] * N] * 40, errors={g: 1 for g in range(40)})
    records = train_records(samples, [0.0] * len(samples), None, policy(k=8), 1)
    assert len(records) <= 8 + 2 * N  # best + worst, then errored groups up to the budget


def test_the_choice_is_reproducible_and_depends_on_seed_and_step():
    samples = make_samples([[0.1 * g] * N for g in range(30)])

    def pick(seed: int, step: int) -> list[str]:
        return groups_of(train_records(samples, [0.0] * 120, None, policy(16, seed=seed), step))

    assert pick(0, 5) == pick(0, 5)
    assert pick(0, 5) != pick(0, 6) or pick(0, 5) != pick(1, 5)


def test_zero_budget_stores_nothing():
    samples = make_samples([[1.0] * N, [0.0] * N])
    assert train_records(samples, [0.0] * 8, None, policy(k=0), 1) == []


def test_token_data_goes_to_the_configured_fraction_with_per_token_advantages():
    samples = make_samples([[0.1 * g] * N for g in range(50)])
    advantages = torch.arange(len(samples) * 5, dtype=torch.float32).reshape(len(samples), 5)
    records = train_records(
        samples,
        [float(a) for a in advantages[:, 0]],
        advantages,
        policy(k=200, fraction=0.3),
        7,
        CharDecoder(),
    )
    with_tokens = [r for r in records if r.token_data is not None]
    assert 0.15 < len(with_tokens) / len(records) < 0.45
    again = train_records(
        samples, [0.0] * 200, advantages, policy(k=200, fraction=0.3), 7, CharDecoder()
    )
    assert [r.token_data is not None for r in again] == [r.token_data is not None for r in records]
    first = with_tokens[0]
    assert first.token_data is not None
    row = next(i for i, s in enumerate(samples) if s.completion.text == first.response)
    assert first.token_data["advantages"] == advantages[row, :3].tolist()  # response length 3
    assert first.token_data["logprobs"] == [-0.5, -1.0, -0.25]
    assert len(first.token_data["tokens"]) == len(first.token_data["token_ids"]) == 3
    assert first.advantage == float(advantages[row, 0])


def test_all_or_none_get_token_data_at_the_extremes():
    samples = make_samples([[0.1 * g] * N for g in range(4)])
    every = train_records(samples, [0.0] * 16, None, policy(16, fraction=1.0), 1)
    assert all(r.token_data is not None and "advantages" not in r.token_data for r in every)
    none = train_records(samples, [0.0] * 16, None, policy(16, fraction=0.0), 1)
    assert all(r.token_data is None for r in none)


def test_every_validation_sample_is_stored_up_to_the_cap():
    samples = make_samples([[1.0] * N for _ in range(100)])
    records = val_records(samples, policy(k=0), step=10)
    assert len(records) == 400
    assert all(r.split == "val" and r.advantage == 0.0 for r in records)
    assert len(val_records(samples, policy(cap=50), step=10)) == 50


def test_non_finite_scores_are_stored_as_zero_and_ignored_for_ranking():
    samples = make_samples([[math.nan] * N, [1.0] * N, [0.0] * N])
    summary = summarize_groups(samples)
    assert summary[0] == GroupSummary(group=0, size=N, mean_score=0.0, errors=0)
    records = train_records(samples, [math.inf] * 12, None, policy(k=12), 1)
    assert all(math.isfinite(r.score) and r.advantage == 0.0 for r in records)

"""Which rollout samples a step stores, and which of them carry per-token data.

Training: `logging.samples_per_step` samples as whole GRPO groups (a group is only
readable next to its siblings): the best and the worst group by mean score always,
then groups with reward errors (most errors first, up to the same budget again, so a
broken reward cannot flood the store), then random groups until the budget is met.
Validation: every sample, up to `logging.val_samples_cap`.
A seeded fraction (`logging.token_data_fraction`) of the stored samples also carries
token texts and ids, sampling log-probs and (training) per-token advantages.

Seeds derive from (trainer.seed, step), so a rerun or a resumed run stores the same
samples. No torch import: tensors are only indexed and turned into lists.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from trainer.reporting.base import SampleRecord

if TYPE_CHECKING:
    from torch import Tensor

    from trainer.config.schema import RunConfig
    from trainer.rollout.collect import Sample


class TokenDecoder(Protocol):
    def batch_decode(self, sequences: list[list[int]], **kwargs: Any) -> list[str]: ...


@dataclass(frozen=True)
class SamplePolicy:
    samples_per_step: int
    token_data_fraction: float
    val_samples_cap: int
    seed: int

    @classmethod
    def from_config(cls, cfg: RunConfig) -> SamplePolicy:
        return cls(
            samples_per_step=cfg.logging.samples_per_step,
            token_data_fraction=cfg.logging.token_data_fraction,
            val_samples_cap=cfg.logging.val_samples_cap,
            seed=cfg.trainer.seed,
        )


@dataclass(frozen=True)
class GroupSummary:
    group: int
    size: int
    mean_score: float
    errors: int


def summarize_groups(samples: Sequence[Sample]) -> list[GroupSummary]:
    """One summary per group, in order of first appearance."""
    members: dict[int, list[Sample]] = {}
    for s in samples:
        members.setdefault(s.group, []).append(s)
    return [
        GroupSummary(
            group=g,
            size=len(group),
            mean_score=mean_finite([s.score for s in group]),
            errors=sum(1 for s in group if s.reward.error),
        )
        for g, group in members.items()
    ]


def mean_finite(values: list[float]) -> float:
    finite = [v for v in values if math.isfinite(v)]
    return sum(finite) / len(finite) if finite else 0.0


def choose_groups(groups: list[GroupSummary], budget: int, rng: random.Random) -> list[int]:
    """Group ids to store, in priority order: best, worst, errored, then random until
    `budget` samples (whole groups, so the last one may overshoot it)."""
    if budget <= 0 or not groups:
        return []
    best = max(groups, key=lambda g: g.mean_score)
    worst = min(groups, key=lambda g: g.mean_score)
    chosen = list(dict.fromkeys([best.group, worst.group]))
    by_id = {g.group: g for g in groups}
    errored = sorted((g for g in groups if g.errors), key=lambda g: -g.errors)
    error_budget = budget
    for g in errored:
        if g.group in chosen:
            continue
        if error_budget <= 0:
            break
        chosen.append(g.group)
        error_budget -= g.size
    rest = [g.group for g in groups if g.group not in chosen]
    rng.shuffle(rest)
    stored = sum(by_id[g].size for g in chosen)
    for group_id in rest:
        if stored >= budget:
            break
        chosen.append(group_id)
        stored += by_id[group_id].size
    return chosen


def token_data(
    sample: Sample, decoder: TokenDecoder | None, advantages: list[float] | None
) -> dict[str, list[Any]]:
    """Per-token view of one response: ids, texts, sampling log-probs, advantages."""
    ids = list(sample.completion.token_ids)
    data: dict[str, list[Any]] = {
        "token_ids": ids,
        "logprobs": [float(x) for x in sample.completion.logprobs[: len(ids)]],
    }
    if decoder is not None:
        data["tokens"] = decoder.batch_decode([[t] for t in ids])
    if advantages is not None:
        data["advantages"] = advantages[: len(ids)]
    if sample.completion.response_mask is not None:  # multi-turn: 0 on inserted context
        data["mask"] = [int(m) for m in sample.completion.response_mask[: len(ids)]]
    return data


def to_record(
    sample: Sample,
    step: int,
    split: Literal["train", "val", "eval"],
    advantage: float = 0.0,
    tokens: dict[str, list[Any]] | None = None,
) -> SampleRecord:
    return SampleRecord(
        step=step,
        group_id=sample.prompt.uid,
        data_source=sample.prompt.data_source,
        prompt=sample.prompt.prompt_text,
        response=sample.completion.text,
        ground_truth=str(sample.prompt.ground_truth),
        score=sample.score if math.isfinite(sample.score) else 0.0,
        components=dict(sample.reward.components),
        reward_extra=dict(sample.reward.extra),
        advantage=advantage if math.isfinite(advantage) else 0.0,
        prompt_length=len(sample.prompt.prompt_ids),
        response_length=len(sample.completion.token_ids),
        finish_reason=sample.completion.finish_reason,
        error=sample.reward.error,
        split=split,
        token_data=tokens,
        turns=recorded_turns(sample.completion.turns),
        row=sample.prompt.row if sample.prompt.row >= 0 else None,
    )


# The studio stores at most this many turns per sample; `response` keeps the whole episode.
MAX_RECORDED_TURNS = 64


def recorded_turns(turns: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """A copy of an episode's first `MAX_RECORDED_TURNS` turns (None for single-turn)."""
    return [dict(t) for t in turns[:MAX_RECORDED_TURNS]] if turns else None


def pick_token_rows(count: int, fraction: float, rng: random.Random) -> set[int]:
    """Which of `count` stored samples carry token data: each with probability
    `fraction`, drawn in order from a seeded generator."""
    return {i for i in range(count) if rng.random() < fraction}


def train_records(
    samples: Sequence[Sample],
    advantages: Sequence[float],
    token_advantages: Tensor | None,
    policy: SamplePolicy,
    step: int,
    decoder: TokenDecoder | None = None,
) -> list[SampleRecord]:
    """The training samples of one step to store (see the module docstring).

    `advantages[i]` is sample i's scalar advantage; `token_advantages` is the (B, R)
    per-token advantage tensor of the batch, rows in the same order, when available."""
    groups = choose_groups(
        summarize_groups(samples),
        policy.samples_per_step,
        random.Random(f"samples:{policy.seed}:{step}"),
    )
    rank = {g: i for i, g in enumerate(groups)}
    rows = sorted(
        (i for i, s in enumerate(samples) if s.group in rank),
        key=lambda i: (rank[samples[i].group], i),
    )
    with_tokens = pick_token_rows(
        len(rows), policy.token_data_fraction, random.Random(f"tokens:{policy.seed}:{step}")
    )
    records = []
    for position, i in enumerate(rows):
        tokens = None
        if position in with_tokens:
            row = None if token_advantages is None else token_advantages[i].tolist()
            tokens = token_data(samples[i], decoder, row)
        records.append(to_record(samples[i], step, "train", advantages[i], tokens))
    return records


def val_records(
    samples: Sequence[Sample],
    policy: SamplePolicy,
    step: int,
    decoder: TokenDecoder | None = None,
) -> list[SampleRecord]:
    """Every validation sample, up to `val_samples_cap`, in prompt order."""
    kept = list(samples[: policy.val_samples_cap])
    with_tokens = pick_token_rows(
        len(kept), policy.token_data_fraction, random.Random(f"val-tokens:{policy.seed}:{step}")
    )
    return [
        to_record(s, step, "val", 0.0, token_data(s, decoder, None) if i in with_tokens else None)
        for i, s in enumerate(kept)
    ]

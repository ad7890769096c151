"""Read-side queries of one run's rollout samples for the rollout review pages.

Every query reads live samples only (a sample a later attempt superseded is history)
and is bounded: lists stop at a limit, aggregates return one row per step, group or
bin. Non-finite scores (NaN, inf) are left out of every aggregate: they have no place
on an axis and would poison a mean.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.db.models import (
    Avg,
    Count,
    F,
    Func,
    IntegerField,
    Max,
    Min,
    Q,
    QuerySet,
    StdDev,
    Value,
)
from django.db.models.functions import Least

from studio.telemetry.models import RolloutSample
from studio.telemetry.series import StepRange

SPREAD_EPSILON = 1e-9  # scores this close count as equal: GRPO's advantages are all ~0


def live_samples(run_id: int) -> QuerySet[RolloutSample]:
    return RolloutSample.objects.filter(run_id=run_id, superseded=False)


def finite_scores(samples: QuerySet[RolloutSample]) -> QuerySet[RolloutSample]:
    # Postgres sorts NaN above infinity, so `< inf` also drops NaN.
    return samples.filter(score__gt=-math.inf, score__lt=math.inf)


@dataclass(frozen=True)
class StepCount:
    step: int
    samples: int


def step_counts(run_id: int, split: str | None = None) -> list[StepCount]:
    """The steps that recorded samples, oldest first, with how many each holds."""
    samples = live_samples(run_id)
    if split:
        samples = samples.filter(split=split)
    rows = samples.values("step").annotate(n=Count("id")).order_by("step")
    return [StepCount(row["step"], row["n"]) for row in rows]


@dataclass(frozen=True)
class PromptSummary:
    prompt: str
    data_source: str
    samples: int
    steps: int
    first_step: int
    last_step: int
    example_sample: int


def distinct_prompts(run_id: int, contains: str = "", limit: int = 100) -> list[PromptSummary]:
    """The run's distinct prompts, most sampled first (ties: the earliest seen first)."""
    samples = live_samples(run_id)
    if contains:
        samples = samples.filter(prompt__icontains=contains)
    rows = (
        samples.values("prompt")
        .annotate(
            source=Min("data_source"),
            n=Count("id"),
            n_steps=Count("step", distinct=True),
            first=Min("step"),
            last=Max("step"),
            example=Min("id"),
        )
        .order_by("-n", "example")[:limit]
    )
    return [
        PromptSummary(
            r["prompt"],
            r["source"],
            r["n"],
            r["n_steps"],
            r["first"],
            r["last"],
            r["example"],
        )
        for r in rows
    ]


def same_prompt_samples(run_id: int, prompt: str, limit: int) -> QuerySet[RolloutSample]:
    """The run's live samples of one prompt, by step then id (a timeline)."""
    return live_samples(run_id).filter(prompt=prompt).order_by("step", "id")[:limit]


@dataclass(frozen=True)
class GroupSummary:
    group_id: str
    samples: int
    score_mean: float | None
    score_std: float | None
    score_min: float | None
    score_max: float | None

    @property
    def zero_spread(self) -> bool:
        """All scores equal: GRPO's advantages are zero, the group teaches nothing."""
        if self.score_min is None or self.score_max is None:
            return True
        return self.score_max - self.score_min <= SPREAD_EPSILON


def step_groups(run_id: int, step: int, limit: int) -> list[GroupSummary]:
    """Every group (one prompt's samples) of one step with its score spread."""
    finite = Q(score__gt=-math.inf, score__lt=math.inf)
    rows = (
        live_samples(run_id)
        .filter(step=step)
        .values("group_id")
        .annotate(
            n=Count("id"),
            mean=Avg("score", filter=finite),
            std=StdDev("score", filter=finite),
            lo=Min("score", filter=finite),
            hi=Max("score", filter=finite),
        )
        .order_by("group_id")[:limit]
    )
    return [
        GroupSummary(r["group_id"], r["n"], r["mean"], r["std"], r["lo"], r["hi"]) for r in rows
    ]


@dataclass(frozen=True)
class HistogramBin:
    low: float
    high: float
    count: int


def score_histogram(run_id: int, steps: StepRange, bins: int) -> list[HistogramBin]:
    """Equal-width bins over the step range's score span; the last bin is closed, so
    the highest score is counted. One score value (or none) gives one bin (or none)."""
    samples = finite_scores(live_samples(run_id)).filter(
        step__gte=steps.first, step__lte=steps.last
    )
    span = samples.aggregate(lo=Min("score"), hi=Max("score"))
    low, high = span["lo"], span["hi"]
    if low is None or high is None:
        return []
    if high - low <= SPREAD_EPSILON:
        return [HistogramBin(low, high, samples.count())]
    width = (high - low) / bins
    counts = [0] * bins
    # width_bucket is 1-based and puts `high` itself in bin bins + 1: clamp it into the last.
    bucket = Func(
        F("score"),
        Value(low),
        Value(high),
        Value(bins),
        function="width_bucket",
        output_field=IntegerField(),
    )
    rows = (
        samples.annotate(bucket=Least(bucket, Value(bins)))
        .values("bucket")
        .annotate(n=Count("id"))
        .order_by()
    )
    for row in rows:
        counts[int(row["bucket"]) - 1] += row["n"]
    return [
        HistogramBin(low + i * width, high if i == bins - 1 else low + (i + 1) * width, n)
        for i, n in enumerate(counts)
    ]


@dataclass(frozen=True)
class LengthPoint:
    sample: int
    step: int
    response_length: int
    score: float
    truncated: bool


def length_score_points(run_id: int, steps: StepRange, limit: int) -> list[LengthPoint]:
    """Response length vs score of the newest `limit` samples in the step range."""
    rows = (
        finite_scores(live_samples(run_id))
        .filter(step__gte=steps.first, step__lte=steps.last)
        .order_by("-id")
        .values_list("id", "step", "response_length", "score", "finish_reason")[:limit]
    )
    return [LengthPoint(i, s, n, score, reason == "length") for i, s, n, score, reason in rows]

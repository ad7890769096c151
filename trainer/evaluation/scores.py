"""Scores of an evaluation: pass@k (the unbiased estimator of Chen et al. 2021, "Evaluating
Large Language Models Trained on Code") and mean@k, per prompt and averaged.

Pure Python on counts, no torch: the studio computes an evaluation's results from its
stored samples with these same functions (studio.evaluations.results).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from math import comb


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of `k` responses drawn without replacement from `n`
    (of which `c` pass) passes: 1 - C(n - c, k) / C(n, k)."""
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got n={n}, k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def mean_at_k(scores: Sequence[float]) -> float:
    """The mean score of a prompt's responses (verl's mean@N)."""
    if not scores:
        raise ValueError("mean@k of no responses")
    return sum(scores) / len(scores)


@dataclass(frozen=True)
class Response:
    """One scored response, as an evaluation stores it."""

    prompt: str  # the prompt's id (its group)
    data_source: str
    score: float
    length: int  # response tokens
    error: bool  # the reward could not score it


@dataclass(frozen=True)
class Scores:
    """One model's results over a set of prompts (`k`: responses per prompt)."""

    prompts: int
    responses: int
    k: int
    mean_score: float
    pass_at_k: float
    mean_at_k: float
    mean_length: float
    error_rate: float

    def as_metrics(self, prefix: str) -> dict[str, float]:
        return {
            f"{prefix}score/mean": self.mean_score,
            f"{prefix}pass@{self.k}": self.pass_at_k,
            f"{prefix}mean@{self.k}": self.mean_at_k,
            f"{prefix}response_length/mean": self.mean_length,
            f"{prefix}error_rate": self.error_rate,
            f"{prefix}prompts": float(self.prompts),
        }


def summarise(responses: Iterable[Response], k: int, pass_threshold: float) -> Scores | None:
    """pass@k and mean@k averaged over prompts; a prompt with fewer than `k` responses
    (an evaluation cut short) uses k = its own count. None: no responses."""
    by_prompt: dict[str, list[Response]] = defaultdict(list)
    for r in responses:
        by_prompt[r.prompt].append(r)
    if not by_prompt:
        return None
    every = [r for group in by_prompt.values() for r in group]
    passes, means = [], []
    for group in by_prompt.values():
        scores = [r.score for r in group]
        passed = sum(1 for s in scores if s >= pass_threshold)
        passes.append(pass_at_k(len(scores), passed, min(k, len(scores))))
        means.append(mean_at_k(scores))
    return Scores(
        prompts=len(by_prompt),
        responses=len(every),
        k=k,
        mean_score=sum(r.score for r in every) / len(every),
        pass_at_k=sum(passes) / len(passes),
        mean_at_k=sum(means) / len(means),
        mean_length=sum(r.length for r in every) / len(every),
        error_rate=sum(1 for r in every if r.error) / len(every),
    )


def by_data_source(
    responses: Iterable[Response], k: int, pass_threshold: float
) -> dict[str, Scores]:
    groups: dict[str, list[Response]] = defaultdict(list)
    for r in responses:
        groups[r.data_source].append(r)
    found = {source: summarise(rs, k, pass_threshold) for source, rs in sorted(groups.items())}
    return {source: scores for source, scores in found.items() if scores is not None}

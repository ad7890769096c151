"""`InProcessScorer`: calls a trusted reward function directly (no isolation, no timeout)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from trainer.rewards.contract import RewardRequest, RewardResult, error_result, normalise
from trainer.rewards.loader import describe_exception


class InProcessScorer:
    """For built-ins and code you trust: a user function's exception or invalid return
    still becomes an error result, but a hang or a crash takes the caller down."""

    def __init__(
        self, fn: Callable[..., Any] | None, batch_fn: Callable[..., Any] | None = None
    ) -> None:
        if fn is None and batch_fn is None:
            raise ValueError("InProcessScorer needs a reward function or a batch function")
        self.fn = fn
        self.batch_fn = batch_fn

    def score_batch(self, requests: list[RewardRequest]) -> list[RewardResult]:
        if not requests:
            return []
        if self.batch_fn is not None:
            return self._score_batch_form(requests)
        return [self._score_one(r) for r in requests]

    def _score_one(self, request: RewardRequest) -> RewardResult:
        assert self.fn is not None
        started = time.perf_counter()
        try:
            value = self.fn(
                data_source=request.data_source,
                solution_str=request.solution_str,
                ground_truth=request.ground_truth,
                extra_info=request.extra_info,
            )
            result = normalise(value)
        except Exception as exc:
            result = error_result(f"exception: {describe_exception(exc)}")
        result.elapsed_ms = (time.perf_counter() - started) * 1000
        return result

    def _score_batch_form(self, requests: list[RewardRequest]) -> list[RewardResult]:
        assert self.batch_fn is not None
        started = time.perf_counter()
        try:
            values = self.batch_fn(
                data_sources=[r.data_source for r in requests],
                solution_strs=[r.solution_str for r in requests],
                ground_truths=[r.ground_truth for r in requests],
                extra_infos=[r.extra_info for r in requests],
            )
        except Exception as exc:
            values = [error_result(f"exception: {describe_exception(exc)}") for _ in requests]
        if isinstance(values, (list, tuple)) and len(values) == len(requests):
            results = [v if isinstance(v, RewardResult) else normalise(v) for v in values]
        else:
            got = (
                f"{len(values)} values"
                if isinstance(values, (list, tuple))
                else type(values).__name__
            )
            reason = (
                f"invalid return: the batch function returned {got} for {len(requests)} "
                "requests; return a list, one reward per request"
            )
            results = [error_result(reason) for _ in requests]
        per_call = (time.perf_counter() - started) * 1000 / len(requests)
        for result in results:
            result.elapsed_ms = per_call
        return results

    def close(self) -> None:
        pass

"""`InProcessScorer`: calls a trusted reward function directly (no isolation, no timeout)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from trainer.config.reward_kwargs import kwargs_problem
from trainer.rewards.contract import (
    BATCH_CHUNK_SIZE,
    RewardRequest,
    RewardResult,
    error_result,
    normalise,
    scored_alone,
)
from trainer.rewards.sandbox.values import batch_length_problem
from trainer.rewards.signature import call_error


class InProcessScorer:
    """For built-ins and code you trust: a user function's exception or invalid return
    still becomes an error result, but a hang or a crash takes the caller down.

    A batch function is called on chunks of ``chunk_size`` rows; a call that raises or
    returns the wrong number of values is retried one row per call, as in the sandbox.
    """

    def __init__(
        self,
        fn: Callable[..., Any] | None,
        batch_fn: Callable[..., Any] | None = None,
        chunk_size: int = BATCH_CHUNK_SIZE,
        kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        if fn is None and batch_fn is None:
            raise ValueError("InProcessScorer needs a reward function or a batch function")
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
        self.kwargs = dict(kwargs or {})  # reward.kwargs: passed to every call
        problem = kwargs_problem(self.kwargs)
        if problem:
            raise ValueError(problem)
        self.fn = fn
        self.batch_fn = batch_fn
        self.chunk_size = chunk_size
        self.batch_fallbacks = 0  # batch calls that failed as a whole and were retried

    def score_batch(self, requests: list[RewardRequest]) -> list[RewardResult]:
        if self.batch_fn is None:
            return [self._score_one(r) for r in requests]
        results: list[RewardResult] = []
        for start in range(0, len(requests), self.chunk_size):
            results += self._score_chunk(requests[start : start + self.chunk_size])
        return results

    def _score_one(self, request: RewardRequest) -> RewardResult:
        assert self.fn is not None
        started = time.perf_counter()
        try:
            value = self.fn(
                data_source=request.data_source,
                solution_str=request.solution_str,
                ground_truth=request.ground_truth,
                extra_info=request.extra_info,
                **self.kwargs,
            )
            result = normalise(value)
        except Exception as exc:
            result = error_result(call_error(exc))
        result.elapsed_ms = (time.perf_counter() - started) * 1000
        return result

    def _score_chunk(self, requests: list[RewardRequest]) -> list[RewardResult]:
        results, failure = self._call_batch(requests)
        if results is not None:
            return results
        if len(requests) == 1:
            return [error_result(failure)]
        self.batch_fallbacks += 1
        alone: list[RewardResult] = []
        for request in requests:
            result, own_failure = self._call_batch([request])
            alone += result or [error_result(scored_alone(own_failure, len(requests)))]
        return alone

    def _call_batch(self, requests: list[RewardRequest]) -> tuple[list[RewardResult] | None, str]:
        """(one result per request, '') or (None, why the call failed as a whole)."""
        assert self.batch_fn is not None
        started = time.perf_counter()
        try:
            values = self.batch_fn(
                data_sources=[r.data_source for r in requests],
                solution_strs=[r.solution_str for r in requests],
                ground_truths=[r.ground_truth for r in requests],
                extra_infos=[r.extra_info for r in requests],
                **self.kwargs,
            )
        except Exception as exc:
            return None, call_error(exc)
        problem = batch_length_problem(values, len(requests))
        if problem:
            return None, problem
        per_row = (time.perf_counter() - started) * 1000 / len(requests)
        results = [normalise(v) for v in values]
        for result in results:
            result.elapsed_ms = per_row
        return results, ""

    def close(self) -> None:
        pass

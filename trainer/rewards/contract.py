"""The reward function contract: requests, results, and what a user function may return.

A reward function has verl's signature
``compute_score(data_source, solution_str, ground_truth, extra_info, **kw)`` (or verl's
batch form: the same arguments as lists, returning a list of the same length) and returns
a finite number, or a dict with a finite ``"score"`` plus other keys, as verl's reward
managers read them: numbers and booleans are components (charted separately); strings,
None and small lists or dicts are the sample's extra info (kept with it, at most
``MAX_EXTRA_BYTES`` of JSON). ``reward.kwargs`` reach the function as keyword
arguments, as verl's ``custom_reward_function.reward_kwargs`` do. Anything else becomes
an error result with a reason and score 0.0, so one bad sample never crashes a run; the
run fails instead when a batch's error rate exceeds ``reward.max_error_rate``.

This module is imported by the studio and by sandboxed children: stdlib only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from trainer.rewards.errors import InvalidReturn
from trainer.rewards.sandbox.values import (
    MAX_COMPONENTS,
    MAX_EXTRA_BYTES,
    as_finite_float,
    escape_text,
    parse_return,
    validate_wire,
)

__all__ = [
    "BATCH_CHUNK_SIZE",
    "MAX_COMPONENTS",
    "MAX_EXTRA_BYTES",
    "InvalidReturn",
    "RewardRequest",
    "RewardResult",
    "RewardScorer",
    "as_finite_float",
    "error_rate",
    "error_result",
    "normalise",
    "result_from_wire",
    "result_to_wire",
    "scored_alone",
]

# Rows per call of a batch function (the sandbox's `SandboxLimits.chunk_size` default,
# and the in-process scorer's), as verl's batch reward manager bounds its calls.
BATCH_CHUNK_SIZE = 64


@dataclass(frozen=True)
class RewardRequest:
    """One response to score: the arguments of verl's ``compute_score``."""

    data_source: str
    solution_str: str
    ground_truth: Any
    extra_info: dict[str, Any]
    prompt: str = ""  # the rendered prompt; reward models score prompt + response


@dataclass
class RewardResult:
    """The outcome of one reward call.

    ``error`` is empty on success; otherwise it says why the call failed and ``score``
    is 0.0. ``components`` holds the numeric and boolean keys of a dict return (not
    ``score``); ``extra`` its other keys (strings, None, small lists and dicts).
    ``output`` is what the function printed (sandbox only, capped).
    """

    score: float
    components: dict[str, float] = field(default_factory=dict)
    error: str = ""
    elapsed_ms: float = 0.0
    output: str = ""
    # Several reward sources combined (trainer.training.reward_sources): each one's unweighted
    # score by name; `score` is their weighted sum.
    sources: dict[str, float] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.error


class RewardScorer(Protocol):
    """Scores a batch; one result per request, in order. Never raises for user errors."""

    def score_batch(self, requests: list[RewardRequest]) -> list[RewardResult]: ...

    def close(self) -> None: ...


def error_result(reason: str, elapsed_ms: float = 0.0, output: str = "") -> RewardResult:
    return RewardResult(
        score=0.0,
        components={},
        error=escape_text(reason),
        elapsed_ms=elapsed_ms,
        output=escape_text(output),
    )


def scored_alone(error: str, batch_rows: int) -> str:
    """A row's own error when it failed again after its batch call failed as a whole (the
    note ends the first line: a traceback may follow)."""
    first, newline, frames = error.partition("\n")
    note = f" (scored alone after the batch call of its {batch_rows} rows failed)"
    return first + note + newline + frames


def error_rate(results: list[RewardResult]) -> float:
    """Fraction of results that are errors (0.0 for an empty batch)."""
    if not results:
        return 0.0
    return sum(1 for r in results if r.error) / len(results)


def normalise(value: Any) -> RewardResult:
    """Turn a user function's return value into a `RewardResult` (an error one if invalid)."""
    try:
        score, components, extra = parse_return(value)
    except InvalidReturn as exc:
        return error_result(f"invalid return: {exc}")
    return RewardResult(score=score, components=components, extra=extra)


def result_to_wire(result: RewardResult) -> dict[str, Any]:
    return {
        "score": result.score,
        "components": result.components,
        "extra": result.extra,
        "error": result.error,
    }


def result_from_wire(obj: Any) -> RewardResult:
    """Re-validate a result that crossed a process boundary (it may come from hostile code)."""
    clean = validate_wire(obj)
    return RewardResult(
        score=clean["score"],
        components=clean["components"],
        error=clean["error"],
        extra=clean["extra"],
    )

"""Score a test-run's rows in the sandbox, bounded in wall-clock time.

The studio runs user code only through `trainer.rewards.SandboxPool`, the same pool the
trainer uses. A pool is started for one test-run and closed after it. Rows are sent in
chunks sized so that even if every call hits its timeout the run stays inside the time
budget (a batch function's chunk counts its whole call and then each row alone, the
fallback after a failed whole call); rows that no longer fit are reported as skipped,
not run. Where the rows come from is `studio.rewards.sources`; the test-run's life is
`studio.rewards.lifecycle`.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from studio.datasets.files import json_safe
from studio.datasets.stats import Bin, histogram
from trainer.rewards import (
    RewardCodeError,
    RewardRequest,
    RewardResult,
    SandboxLimits,
    SandboxPool,
)

MAX_ROWS = 200
HISTOGRAM_BINS = 10
OUTPUT_CHARS = 2000  # printed output kept per row in the response
POOL_START_S = 1.0  # time reserved for starting the pool, out of the budget
CALL_OVERHEAD_S = 0.25  # fork + hand-off per call, on top of its timeout
PROGRESS_EVERY = 16  # rows per pool call, so progress moves while a test-run scores


@dataclass(frozen=True)
class TrialRow:
    """One call to make: verl's arguments plus where the row came from."""

    data_source: str
    solution_str: str
    ground_truth: Any
    extra_info: dict[str, Any]
    index: int  # position in the pasted completions, or the dataset row
    prompt: str | None = None  # the row's prompt text (dataset rows only), for display
    sample: int | None = None  # which of the prompt's sampled completions (sampled only)
    finish_reason: str = ""  # why generation stopped: eos, stop, length (sampled only)
    error: str = ""  # set when there is nothing to score (e.g. the prompt was too long)


@dataclass
class TrialReport:
    rows: list[dict[str, Any]]
    summary: dict[str, Any]
    isolation: dict[str, bool] = field(default_factory=dict)
    load_error: str = ""
    elapsed_ms: float = 0.0


def run_trial(
    code: str,
    entrypoint: str,
    rows: Sequence[TrialRow],
    *,
    timeout_s: float,
    budget_s: float,
    require_full_isolation: bool,
    on_progress: Callable[[int], None] | None = None,
    kwargs: dict[str, Any] | None = None,
) -> TrialReport:
    """Score `rows` with the code in a fresh one-worker sandbox pool, within `budget_s`.

    Never raises for anything the user's code does: load failures, timeouts and crashes
    become per-row errors. Raises `SandboxUnavailableError` when the sandbox can't start.
    Rows that come with an `error` are not sent. `on_progress(rows_done)` is called
    after every chunk of at most `PROGRESS_EVERY` rows. ``kwargs`` are the function's
    keyword arguments (`reward.kwargs`).
    """
    started = time.monotonic()
    deadline = started + budget_s
    results: list[RewardResult | None] = [
        RewardResult(score=0.0, error=row.error) if row.error else None for row in rows
    ]
    pending = [i for i, row in enumerate(rows) if not row.error]
    skipped = f"skipped: the test-run's time budget of {budget_s:g} s ran out"
    load_error = ""
    isolation: dict[str, bool] = {}
    limits = SandboxLimits(
        timeout_s=timeout_s, load_timeout_s=max(1.0, min(10.0, budget_s - timeout_s))
    )
    try:
        pool = SandboxPool(
            code,
            entrypoint,
            workers=1,
            limits=limits,
            require_full_isolation=require_full_isolation,
            kwargs=kwargs,
        )
    except RewardCodeError as exc:
        load_error = str(exc)
        for i in pending:
            results[i] = RewardResult(score=0.0, error=f"load failed: {exc}")
    else:
        with pool:
            isolation = dict(pool.isolation)
            done = 0
            while done < len(pending):
                fits = _rows_that_fit(limits, pool.batch, deadline - time.monotonic())
                if fits < 1:
                    break
                part = pending[done : done + fits]
                requests = [
                    RewardRequest(
                        data_source=rows[i].data_source,
                        solution_str=rows[i].solution_str,
                        ground_truth=rows[i].ground_truth,
                        extra_info=rows[i].extra_info,
                    )
                    for i in part
                ]
                for i, result in zip(part, pool.score_batch(requests), strict=True):
                    results[i] = result
                done += len(part)
                if on_progress is not None:
                    on_progress(len(rows) - len(pending) + done)
    outcomes = [
        _row(row, result)
        if result is not None
        else {**_row(row, RewardResult(0.0, error=skipped)), "skipped": True}
        for row, result in zip(rows, results, strict=True)
    ]
    elapsed_ms = (time.monotonic() - started) * 1000
    return TrialReport(
        rows=outcomes,
        summary=summarise(outcomes),
        isolation=isolation,
        load_error=load_error,
        elapsed_ms=elapsed_ms,
    )


def _rows_that_fit(limits: SandboxLimits, batch: bool, remaining_s: float) -> int:
    """How many rows (up to `PROGRESS_EVERY`) one pool call may take so that it ends
    within ``remaining_s`` even if every call runs to its limit (for a batch function:
    the whole call, then each row alone)."""
    fits = 0
    for rows in range(1, PROGRESS_EVERY + 1):
        if limits.worst_case_s(rows, batch) + rows * CALL_OVERHEAD_S > remaining_s:
            break
        fits = rows
    return fits


def _row(row: TrialRow, result: RewardResult) -> dict[str, Any]:
    return {
        "index": row.index,
        "sample": row.sample,
        "finish_reason": row.finish_reason,
        "data_source": row.data_source,
        "prompt": row.prompt,
        "solution_str": row.solution_str,
        "ground_truth": json_safe(row.ground_truth),
        "score": result.score,
        "components": dict(result.components),
        "extra": dict(result.extra),
        "error": result.error,
        "elapsed_ms": result.elapsed_ms,
        "output": result.output[:OUTPUT_CHARS],
        "skipped": False,
    }


def summarise(outcomes: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Mean, spread, error rate and a 10-bin histogram of the rows that scored."""
    ran = [o for o in outcomes if not o["skipped"]]
    scores: list[float] = [o["score"] for o in ran if not o["error"]]
    failed = sum(1 for o in ran if o["error"])
    bins: list[Bin] = histogram(scores, HISTOGRAM_BINS, low=0.0, high=1.0)
    return {
        "count": len(outcomes),
        "scored": len(scores),
        "failed": failed,
        "skipped": len(outcomes) - len(ran),
        "error_rate": failed / len(ran) if ran else 0.0,
        "mean": statistics.fmean(scores) if scores else None,
        "std": statistics.pstdev(scores) if scores else None,
        "min": min(scores) if scores else None,
        "max": max(scores) if scores else None,
        "histogram": bins,
    }

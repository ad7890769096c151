"""A/B of two reward versions on exactly the same responses.

Decision (docs/rewards.md, "A/B of two versions"): the second version is scored by a
test-run of its own whose pasted completions are the first test-run's rows, in the
same order. Re-sampling from a model would give different responses; re-using the
rows makes row i of one test-run the same call as row i of the other, so every
difference in score comes from the code. The comparison itself reads both results.
"""

from __future__ import annotations

from typing import Any

from studio.datasets.files import json_safe
from studio.rewards.errors import TestRunError
from studio.rewards.models import RewardTestRun
from studio.rewards.sources import dataset_records

Source = RewardTestRun.Source
SAME_SCORE = 1e-9  # scores closer than this agree


class NotComparable(ValueError):
    """The test-runs can't be compared; the message says why."""


def finished_rows(test_run: RewardTestRun) -> list[dict[str, Any]]:
    if test_run.status != RewardTestRun.Status.SUCCEEDED or not test_run.result:
        raise NotComparable(
            f"Test-run {test_run.pk} has not succeeded (it is {test_run.status}); "
            "compare test-runs that finished with scores."
        )
    rows: list[dict[str, Any]] = test_run.result["rows"]
    return rows


def completions_of(test_run: RewardTestRun) -> list[dict[str, Any]]:
    """The test-run's responses as pasted completions, one per row, in row order."""
    rows = finished_rows(test_run)
    if not rows:
        raise NotComparable(f"Test-run {test_run.pk} has no rows to score again.")
    extra = _extra_infos(test_run, rows)
    return [
        {
            "solution_str": row["solution_str"],
            "ground_truth": row["ground_truth"],
            "data_source": row["data_source"],
            "extra_info": extra[position],
        }
        for position, row in enumerate(rows)
    ]


def _extra_infos(test_run: RewardTestRun, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row's extra_info: the pasted one, or its dataset row's (rows keep no copy)."""
    if test_run.source == Source.COMPLETIONS:
        pasted = test_run.completions or []
        return [
            dict(pasted[row["index"]]["extra_info"]) if row["index"] < len(pasted) else {}
            for row in rows
        ]
    version = test_run.dataset_version
    if version is None:  # the dataset version was deleted since
        return [{} for _ in rows]
    first = min(row["index"] for row in rows)
    last = max(row["index"] for row in rows)
    try:
        records = dataset_records(version, first, last - first + 1)
    except TestRunError:
        return [{} for _ in rows]
    return [
        json_safe(records[row["index"] - first].extra_info)
        if row["index"] - first < len(records)
        else {}
        for row in rows
    ]


def compare(a: RewardTestRun, b: RewardTestRun) -> dict[str, Any]:
    """Row i of `a` against row i of `b`: score difference (b - a), and whether they
    disagree (different scores, or one failed); disagreements first, largest first."""
    rows_a, rows_b = finished_rows(a), finished_rows(b)
    if len(rows_a) != len(rows_b):
        raise NotComparable(
            f"Test-run {a.pk} has {len(rows_a)} rows and test-run {b.pk} has {len(rows_b)}; "
            "compare a test-run with the one that scored its rows again."
        )
    pairs = [
        _pair(position, ra, rb)
        for position, (ra, rb) in enumerate(zip(rows_a, rows_b, strict=True))
    ]
    pairs.sort(key=lambda p: (not p["differs"], -abs(p["delta"] or 0.0), p["position"]))
    compared = [p for p in pairs if p["delta"] is not None or p["differs"]]
    return {
        "a": a.pk,
        "b": b.pk,
        "rows": pairs,
        "compared": len(compared),
        "differing": sum(1 for p in pairs if p["differs"]),
        "same_inputs": all(p["same_input"] for p in pairs),
    }


def _pair(position: int, ra: dict[str, Any], rb: dict[str, Any]) -> dict[str, Any]:
    skipped = ra["skipped"] or rb["skipped"]
    failed_a, failed_b = bool(ra["error"]), bool(rb["error"])
    both_scored = not skipped and not failed_a and not failed_b
    delta = rb["score"] - ra["score"] if both_scored else None
    differs = not skipped and (
        failed_a != failed_b or (delta is not None and abs(delta) > SAME_SCORE)
    )
    return {
        "position": position,
        "index": ra["index"],
        "sample": ra["sample"],
        "prompt": ra["prompt"],
        "solution_str": ra["solution_str"],
        "ground_truth": ra["ground_truth"],
        "same_input": ra["solution_str"] == rb["solution_str"]
        and ra["ground_truth"] == rb["ground_truth"],
        "score_a": ra["score"],
        "score_b": rb["score"],
        "error_a": ra["error"],
        "error_b": rb["error"],
        "delta": delta,
        "differs": differs,
        "skipped": skipped,
    }

"""A short reward series per run, for the sparkline of a runs list.

Built from the min/max downsampling of studio.telemetry.series (which reads the
pre-aggregated tiles), for every run of a page at once: two queries per page, however
many runs and steps. Each of at most `SPARKLINE_POINTS` points is the mean of the
downsampled points of one consecutive slice of the run's steps.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence

from studio.telemetry.series import StepRange, downsample

SPARKLINE_KEY = "critic/score/mean"  # verl's mean sequence reward
SPARKLINE_POINTS = 32


def shrink(values: Sequence[float], points: int = SPARKLINE_POINTS) -> list[float]:
    """At most `points` values: means of consecutive, near-equal slices, in order."""
    if len(values) <= points:
        return list(values)
    cuts = [len(values) * i // points for i in range(points + 1)]
    return [statistics.fmean(values[a:b]) for a, b in itertools.pairwise(cuts)]


def reward_sparklines(run_ids: Sequence[int]) -> dict[int, list[float]]:
    """Run id -> its reward sparkline ([] for runs without reward points yet)."""
    found: dict[int, list[float]] = {run_id: [] for run_id in run_ids}
    if not run_ids:
        return found
    # Two points (low, high) per bucket plus both ends: ~2x what the sparkline shows.
    for series in downsample(run_ids, [SPARKLINE_KEY], 2 * SPARKLINE_POINTS + 2, StepRange()):
        finite = [v for v in series.values if v is not None and math.isfinite(v)]
        found[series.run_id] = shrink(finite)
    return found

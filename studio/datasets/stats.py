"""Summary statistics of a dataset version, computed once at upload."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any, TypedDict

from trainer.data.formats import PromptRecord

PROMPT_HISTOGRAM_BINS = 20


class Bin(TypedDict):
    start: float
    end: float
    count: int


class LengthStats(TypedDict):
    min: int
    max: int
    mean: float
    p50: float
    p95: float
    histogram: list[Bin]


class NamedCount(TypedDict):
    name: str
    count: int


def histogram(
    values: Sequence[float], bins: int, low: float | None = None, high: float | None = None
) -> list[Bin]:
    """Equal-width bins over [low, high] (default: the values' min and max; the last bin
    includes `high`). [] for no values; one bin when every value is the same."""
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return []
    low = min(finite) if low is None else min(low, min(finite))
    high = max(finite) if high is None else max(high, max(finite))
    if low == high:
        return [{"start": low, "end": high, "count": len(finite)}]
    width = (high - low) / bins
    counts = [0] * bins
    for value in finite:
        counts[min(bins - 1, int((value - low) / width))] += 1
    return [
        {
            "start": low + i * width,
            "end": high if i == bins - 1 else low + (i + 1) * width,
            "count": count,
        }
        for i, count in enumerate(counts)
    ]


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not sorted_values:
        return 0.0
    position = (len(sorted_values) - 1) * q
    below = math.floor(position)
    above = min(below + 1, len(sorted_values) - 1)
    fraction = position - below
    return float(sorted_values[below] * (1 - fraction) + sorted_values[above] * fraction)


def prompt_chars(record: PromptRecord) -> int:
    """Prompt length in characters: the text of every message, template excluded."""
    return sum(len(message["content"]) for message in record.messages)


def length_stats(lengths: Sequence[int]) -> LengthStats:
    ordered = sorted(lengths)
    return {
        "min": ordered[0] if ordered else 0,
        "max": ordered[-1] if ordered else 0,
        "mean": sum(ordered) / len(ordered) if ordered else 0.0,
        "p50": percentile(ordered, 0.5),
        "p95": percentile(ordered, 0.95),
        "histogram": histogram(ordered, PROMPT_HISTOGRAM_BINS),
    }


def _counts(values: list[str]) -> list[NamedCount]:
    return [{"name": name, "count": n} for name, n in Counter(values).most_common()]


def dataset_stats(records: Sequence[PromptRecord]) -> dict[str, Any]:
    """Prompt lengths (characters), data sources and splits (``extra_info.split``)."""
    splits = [
        split
        for split in (record.extra_info.get("split") for record in records)
        if isinstance(split, str) and split
    ]
    return {
        "prompt_chars": length_stats([prompt_chars(record) for record in records]),
        "data_sources": _counts([record.data_source for record in records]),
        "splits": _counts(splits),
        "rows_without_split": len(records) - len(splits),
    }

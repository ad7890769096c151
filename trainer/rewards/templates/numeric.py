"""Numeric: a number in the response equals the ground truth within a tolerance.

The last number of the response is compared (``which="first"`` takes the first).
Commas as thousands separators, a leading ``$`` and a trailing ``%`` are ignored.
Options: ``rel_tol`` (1e-6), ``abs_tol`` (1e-9), ``which`` ("last" or "first").
Score 1.0 or 0.0.
"""

import math
import re
from typing import Any

_NUMBER = re.compile(r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|-?\.\d+")


def parse_number(text: object) -> float | None:
    """The number ``text`` spells (commas, $ and % ignored), or None."""
    cleaned = str(text).strip().replace(",", "").replace("$", "").rstrip("%").strip()
    try:
        value = float(cleaned)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict | None = None,
    rel_tol: float = 1e-6,
    abs_tol: float = 1e-9,
    which: str = "last",
    **kwargs: Any,
) -> float:
    expected = parse_number(ground_truth)
    if expected is None:
        raise ValueError(f"ground_truth {ground_truth!r} is not a number")
    found = _NUMBER.findall(solution_str[-10000:] if which == "last" else solution_str[:10000])
    if not found:
        return 0.0
    answer = parse_number(found[-1] if which == "last" else found[0])
    if answer is None:
        return 0.0
    return 1.0 if math.isclose(answer, expected, rel_tol=rel_tol, abs_tol=abs_tol) else 0.0

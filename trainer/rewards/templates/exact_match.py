"""Exact match: the whole response, stripped, equals the ground truth. Score 1.0 or 0.0.

Options (keyword arguments): ``case_sensitive`` (default True).
"""

from typing import Any


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict | None = None,
    case_sensitive: bool = True,
    **kwargs: Any,
) -> float:
    answer = solution_str.strip()
    expected = str(ground_truth).strip()
    if not case_sensitive:
        answer, expected = answer.casefold(), expected.casefold()
    return 1.0 if answer == expected else 0.0

"""Arithmetic: the first integer in the response equals the ground truth. Score 1.0 or 0.0.

Used by the toy arithmetic dataset, whose ground truth is the answer as a string
("12"). A response of "12", "12 apples" or "= 12" scores 1.0; "1 2" does not.
"""

import re
from typing import Any

_INTEGER = re.compile(r"-?\d+")


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict | None = None,
    **kwargs: Any,
) -> float:
    match = _INTEGER.search(solution_str)
    if match is None:
        return 0.0
    try:
        # int() refuses more than 4300 digits: such a response is simply wrong.
        return 1.0 if int(match.group()) == int(str(ground_truth).strip()) else 0.0
    except ValueError:
        return 0.0

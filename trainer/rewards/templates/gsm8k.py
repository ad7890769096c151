"""GSM8K: the answer after ``#### `` equals the ground truth (verl's gsm8k reward).

``method="strict"`` takes the last ``#### <number>``; ``"flexible"`` takes the last
number anywhere. Correct gives ``score`` (1.0), a found but wrong answer gives
``format_score`` (0.0), no answer gives 0.0. Like verl, only the last 300 characters
are searched.
"""

import re
from typing import Any

_SOLUTION_CLIP_CHARS = 300


def extract_solution(solution_str: str, method: str = "strict") -> str | None:
    if method not in ("strict", "flexible"):
        raise ValueError(f"method must be 'strict' or 'flexible', got {method!r}")
    if len(solution_str) > _SOLUTION_CLIP_CHARS:
        solution_str = solution_str[-_SOLUTION_CLIP_CHARS:]
    if method == "strict":
        solutions = re.findall("#### (\\-?[0-9\\.\\,]+)", solution_str)
        if not solutions:
            return None
        return solutions[-1].replace(",", "").replace("$", "")
    for candidate in reversed(re.findall("(\\-?[0-9\\.\\,]+)", solution_str)):
        if candidate not in ("", "."):
            return candidate
    return None


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict | None = None,
    method: str = "strict",
    format_score: float = 0.0,
    score: float = 1.0,
    **kwargs: Any,
) -> float:
    answer = extract_solution(solution_str, method=method)
    if answer is None:
        return 0.0
    return score if answer == str(ground_truth).strip() else format_score

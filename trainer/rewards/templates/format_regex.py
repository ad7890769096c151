"""Format: the response matches a regular expression. Score 1.0 or 0.0.

The pattern comes from the ``pattern`` option, else ``extra_info["format_pattern"]``,
else the R1 format ``<think>...</think> <answer>...</answer>``. ``mode="fullmatch"``
(default) must match the whole stripped response; ``"search"`` anywhere. DOTALL is on.
"""

import re
from typing import Any

DEFAULT_PATTERN = r"<think>.*?</think>\s*<answer>.*?</answer>"


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict | None = None,
    pattern: str | None = None,
    mode: str = "fullmatch",
    **kwargs: Any,
) -> float:
    if pattern is None and isinstance(extra_info, dict):
        pattern = extra_info.get("format_pattern")
    regex = re.compile(pattern or DEFAULT_PATTERN, re.DOTALL)
    if mode == "fullmatch":
        return 1.0 if regex.fullmatch(solution_str.strip()) else 0.0
    if mode == "search":
        return 1.0 if regex.search(solution_str) else 0.0
    raise ValueError(f"mode must be 'fullmatch' or 'search', got {mode!r}")

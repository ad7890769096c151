"""Length penalty: 0.0 up to ``max_length``, then falling linearly to ``-penalty``.

Length is counted in characters (``unit="chars"``) or whitespace-separated words
(``unit="words"``). ``max_length`` comes from the option, else
``extra_info["max_length"]``, else 1000. The penalty reaches ``-penalty`` at twice
``max_length``. Meant to be combined with a correctness reward (see ``weighted``).
"""

from typing import Any


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict | None = None,
    max_length: int | None = None,
    unit: str = "chars",
    penalty: float = 1.0,
    **kwargs: Any,
) -> float:
    if max_length is None and isinstance(extra_info, dict):
        max_length = extra_info.get("max_length")
    limit = int(max_length or 1000)
    if limit <= 0:
        raise ValueError(f"max_length must be positive, got {limit}")
    if unit == "chars":
        length = len(solution_str)
    elif unit == "words":
        length = len(solution_str.split())
    else:
        raise ValueError(f"unit must be 'chars' or 'words', got {unit!r}")
    over = max(0, length - limit)
    return -float(penalty) * min(1.0, over / limit)

"""`reward.kwargs`: keyword arguments for the reward function (verl's
``custom_reward_function.reward_kwargs``), checked once here for the config, the studio's
test-runs and the sandbox pool. Stdlib only."""

from __future__ import annotations

import json
import math
from typing import Any

MAX_KWARGS_BYTES = 4096  # as compact JSON: settings, not data
MAX_KWARGS_DEPTH = 8

# verl's own arguments, per-sample and batch: a keyword argument may not replace them.
RESERVED_NAMES = (
    "data_source",
    "solution_str",
    "ground_truth",
    "extra_info",
    "data_sources",
    "solution_strs",
    "ground_truths",
    "extra_infos",
)


def _json_problem(value: Any, where: str, depth: int = 0) -> str:
    if value is None or isinstance(value, (bool, int, str)):
        return ""
    if isinstance(value, float):
        return "" if math.isfinite(value) else f"{where} is {value}; numbers must be finite"
    if depth >= MAX_KWARGS_DEPTH:
        return f"{where} is nested deeper than {MAX_KWARGS_DEPTH} levels"
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            problem = _json_problem(item, f"{where}[{i}]", depth + 1)
            if problem:
                return problem
        return ""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{where} has a non-string key {key!r:.40}"
            problem = _json_problem(item, f"{where}.{key}", depth + 1)
            if problem:
                return problem
        return ""
    return f"{where} is {type(value).__name__}; only JSON values are allowed"


def kwargs_problem(kwargs: Any) -> str:
    """Why ``kwargs`` cannot be the reward's keyword arguments, or ''."""
    if not isinstance(kwargs, dict):
        return (
            f"reward.kwargs must be a mapping of names to JSON values, got {type(kwargs).__name__}"
        )
    for name in kwargs:
        if not isinstance(name, str) or not name.isidentifier():
            return f"reward.kwargs: {name!r:.40} is not a valid Python argument name"
        if name in RESERVED_NAMES:
            return (
                f"reward.kwargs.{name}: {name!r} is one of verl's own arguments "
                f"({', '.join(RESERVED_NAMES)}); pick another name"
            )
        problem = _json_problem(kwargs[name], f"reward.kwargs.{name}")
        if problem:
            return problem
    size = len(json.dumps(kwargs, ensure_ascii=False, separators=(",", ":")).encode())
    if size > MAX_KWARGS_BYTES:
        return f"reward.kwargs takes {size} bytes as JSON; at most {MAX_KWARGS_BYTES}"
    return ""

"""Reward of the long-completion bench workload: the share of the response's characters
that are digits (0.0-1.0).

The long workload's model has random weights, so an exact-answer reward would be zero for
nearly every group and leave GRPO with no signal. This one is graded: every group has a
spread, every advantage is non-zero, and a policy can raise it within a few steps, so the
two trainers' rewards can be compared. verl signature, as any custom reward.
"""

from typing import Any


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict | None = None,
    **kwargs: Any,
) -> float:
    if not solution_str:
        return 0.0
    return sum(ch.isdigit() for ch in solution_str) / len(solution_str)

"""Exact match, batch form: verl's batch signature, one call scores a list of responses.

The same score as `exact_match` (the stripped response equals the ground truth: 1.0,
else 0.0), written the way verl's ``reward_model.reward_manager=batch`` calls a reward:
every argument is a list and the function returns a list of the same length, one reward
per response, in order. Start here when scoring is cheaper for many responses at once
(one regex compiled, one model or parser loaded, set-up shared by the batch).

Options (keyword arguments): ``case_sensitive`` (default True).
"""

from typing import Any


def compute_score(
    data_sources: list[str],
    solution_strs: list[str],
    ground_truths: list[Any],
    extra_infos: list[dict | None],
    case_sensitive: bool = True,
    **kwargs: Any,
) -> list[float]:
    scores = []
    for solution, truth in zip(solution_strs, ground_truths, strict=True):
        answer, expected = solution.strip(), str(truth).strip()
        if not case_sensitive:
            answer, expected = answer.casefold(), expected.casefold()
        scores.append(1.0 if answer == expected else 0.0)
    return scores  # exactly one reward per response, or every row of the call fails

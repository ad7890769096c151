"""pass@k and mean@k against hand-computed values (trainer.evaluation.scores)."""

from __future__ import annotations

import pytest

from trainer.evaluation.scores import Response, by_data_source, mean_at_k, pass_at_k, summarise


def test_pass_at_k_matches_hand_computed_values():
    # n=5, c=2, k=2: 1 - C(3,2)/C(5,2) = 1 - 3/10
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    # n=4, c=1, k=1: the plain pass rate 1/4
    assert pass_at_k(4, 1, 1) == pytest.approx(0.25)
    # n=10, c=3, k=5: 1 - C(7,5)/C(10,5) = 1 - 21/252
    assert pass_at_k(10, 3, 5) == pytest.approx(1 - 21 / 252)
    assert pass_at_k(3, 0, 3) == 0.0
    assert pass_at_k(4, 2, 3) == 1.0  # fewer failures (2) than draws (3): a pass is certain


def test_pass_at_k_refuses_impossible_counts():
    with pytest.raises(ValueError, match="0 <= c <= n"):
        pass_at_k(2, 3, 1)
    with pytest.raises(ValueError, match="1 <= k <= n"):
        pass_at_k(2, 1, 3)


def test_mean_at_k_is_the_mean_of_a_prompts_scores():
    assert mean_at_k([1.0, 0.0, 0.5, 0.5]) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="no responses"):
        mean_at_k([])


def responses(prompt: str, scores: list[float], source: str = "a") -> list[Response]:
    return [Response(prompt, source, s, length=10 + i, error=False) for i, s in enumerate(scores)]


def test_summaries_average_per_prompt_estimates_over_prompts():
    rows = responses("p1", [1.0, 0.0, 0.0]) + responses("p2", [0.0, 0.0, 0.0], source="b")
    rows.append(Response("p2", "b", 0.0, length=1, error=True))  # p2 has 4 responses
    scores = summarise(rows, k=2, pass_threshold=1.0)
    assert scores is not None
    # p1: n=3, c=1: 1 - C(2,2)/C(3,2) = 2/3; p2: 0
    assert scores.pass_at_k == pytest.approx((2 / 3 + 0.0) / 2)
    assert scores.mean_at_k == pytest.approx((1 / 3 + 0.0) / 2)
    assert scores.mean_score == pytest.approx(1 / 7)
    assert scores.error_rate == pytest.approx(1 / 7)
    assert scores.mean_length == pytest.approx((10 + 11 + 12 + 10 + 11 + 12 + 1) / 7)
    assert scores.prompts == 2 and scores.responses == 7
    per_source = by_data_source(rows, k=2, pass_threshold=1.0)
    assert per_source["a"].pass_at_k == pytest.approx(2 / 3)
    assert per_source["b"].pass_at_k == 0.0
    assert summarise([], k=1, pass_threshold=1.0) is None


def test_the_threshold_decides_what_passes():
    rows = responses("p", [0.5, 0.2])
    assert summarise(rows, 1, pass_threshold=0.5).pass_at_k == pytest.approx(0.5)  # type: ignore[union-attr]
    assert summarise(rows, 1, pass_threshold=0.1).pass_at_k == pytest.approx(1.0)  # type: ignore[union-attr]

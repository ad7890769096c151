"""The built-in rewards, their template sources, `weighted`, and the in-process scorer."""

from __future__ import annotations

import pytest

from tests.rewards.conftest import request
from trainer.rewards import (
    BUILTIN_REWARDS,
    InProcessScorer,
    builtin_source,
    load_reward,
    weighted,
)
from trainer.rewards.builtins import (
    arith,
    boxed_math,
    countdown,
    exact_match,
    format_regex,
    gsm8k,
    length_penalty,
    numeric,
)


@pytest.mark.parametrize(
    ("response", "truth", "score"),
    [
        ("12", "12", 1.0),
        ("12 apples", "12", 1.0),
        ("= 12", 12, 1.0),
        ("-3", "-3", 1.0),
        ("1 2", "12", 0.0),
        ("13", "12", 0.0),
        ("twelve", "12", 0.0),
        ("9" * 5000, "9", 0.0),
    ],
)
def test_arith_compares_the_first_integer(response, truth, score):
    assert arith("arith", response, truth, {}) == score


@pytest.mark.parametrize(
    ("response", "truth", "kwargs", "score"),
    [
        ("Paris", "Paris", {}, 1.0),
        ("  Paris\n", "Paris", {}, 1.0),
        ("paris", "Paris", {}, 0.0),
        ("paris", "Paris", {"case_sensitive": False}, 1.0),
        ("Paris.", "Paris", {}, 0.0),
    ],
)
def test_exact_match(response, truth, kwargs, score):
    assert exact_match("qa", response, truth, {}, **kwargs) == score


@pytest.mark.parametrize(
    ("response", "truth", "kwargs", "score"),
    [
        ("it is 3.14159", "3.14159", {}, 1.0),
        ("1,234.5 dollars", "$1,234.5", {}, 1.0),
        ("0.3333333", "0.3333334", {"rel_tol": 1e-3}, 1.0),
        ("2 then 3", "2", {}, 0.0),
        ("2 then 3", "2", {"which": "first"}, 1.0),
        ("none", "2", {}, 0.0),
        ("1e3", "1000", {}, 1.0),
    ],
)
def test_numeric_compares_with_a_tolerance(response, truth, kwargs, score):
    assert numeric("n", response, truth, {}, **kwargs) == score


def test_numeric_refuses_a_ground_truth_that_is_not_a_number():
    with pytest.raises(ValueError, match="is not a number"):
        numeric("n", "1", "abc", {})


@pytest.mark.parametrize(
    ("response", "truth", "kwargs", "score"),
    [
        ("so #### 72", "72", {}, 1.0),
        ("#### 1,000", "1000", {}, 1.0),
        ("#### 71", "72", {}, 0.0),
        ("the answer is 72", "72", {}, 0.0),
        ("the answer is 72", "72", {"method": "flexible"}, 1.0),
        ("#### 71", "72", {"format_score": 0.1}, 0.1),
        ("#### 72", 72, {}, 1.0),
    ],
)
def test_gsm8k_matches_verl(response, truth, kwargs, score):
    assert gsm8k("openai/gsm8k", response, truth, {}, **kwargs) == score


@pytest.mark.parametrize(
    ("response", "truth", "score"),
    [
        (r"so \boxed{\frac{1}{2}}", r"\frac12", 1.0),
        (r"\boxed{\dfrac{1}{2}}", "0.5", 1.0),
        (r"\boxed{1/2}", r"\frac{1}{2}", 1.0),
        (r"\boxed{10\%}", "10", 1.0),
        (r"\boxed{5 \text{ cm}}", "5", 1.0),
        (r"\boxed{x = 3}", "3", 1.0),
        (r"\boxed{\left( 1, 2 \right)}", "(1,2)", 1.0),
        (r"\boxed{1,000}", "1000", 1.0),
        (r"\boxed{90^\circ}", "90", 1.0),
        (r"\boxed{\sqrt2}", r"\sqrt{2}", 1.0),
        (r"first \boxed{1} then \boxed{2}", "2", 1.0),
        (r"\boxed{3}", "4", 0.0),
        ("no box 3", "3", 0.0),
        (r"\boxed{x+1}", "1+x", 0.0),
        (r"\boxed{0.25}", r"\boxed{\frac{1}{4}}", 1.0),
        (r"\boxed{\frac{a}{b}}", r"\frac{a}{b}", 1.0),
    ],
)
def test_boxed_math_normalises_before_comparing(response, truth, score):
    assert boxed_math("math", response, truth, {}) == score


COUNTDOWN = {"target": 24, "numbers": [3, 4, 6, 2]}


@pytest.mark.parametrize(
    ("response", "kwargs", "score"),
    [
        ("<answer>(6 - 2) * (3 + 3)</answer>", {}, 0.1),  # 3 used twice
        ("<answer>6 * 4</answer>", {}, 1.0),  # each number at most once
        ("<answer>6 * 4</answer>", {"use_all": True}, 0.1),  # TinyZero's stricter rule
        ("<answer>(6 / 2 + 3) * 4</answer>", {"use_all": True}, 1.0),
        ("<answer>(6 / 2 + 3) * 4</answer><answer>6 * 3</answer>", {}, 0.1),  # the last one counts
        ("<answer>6 * 4 + 0</answer>", {}, 0.1),  # 0 is not given
        ("<answer>__import__('os').system('x')</answer>", {}, 0.1),
        ("<answer>6 ** 4</answer>", {}, 0.1),
        ("<answer>6 / (4 - 4)</answer>", {}, 0.1),
        ("<answer>" + "(" * 500 + "6" + ")" * 500 + "</answer>", {}, 0.1),
        ("24", {}, 0.0),
        ("Assistant: <answer>6*4</answer>", {}, 1.0),
    ],
)
def test_countdown_evaluates_safely(response, kwargs, score):
    assert countdown("countdown", response, COUNTDOWN, {}, **kwargs) == score


def test_countdown_uses_exact_fractions():
    truth = {"target": 1, "numbers": [3, 3, 1]}
    assert countdown("countdown", "<answer>(1/3) * 3</answer>", truth, {}) == 1.0


@pytest.mark.parametrize(
    ("response", "kwargs", "extra", "score"),
    [
        ("<think>hm</think> <answer>4</answer>", {}, {}, 1.0),
        ("<answer>4</answer>", {}, {}, 0.0),
        ("ANSWER: 4", {"pattern": r"ANSWER: \d+"}, {}, 1.0),
        ("x ANSWER: 4 y", {"pattern": r"ANSWER: \d+", "mode": "search"}, {}, 1.0),
        ("[[4]]", {}, {"format_pattern": r"\[\[\d+\]\]"}, 1.0),
    ],
)
def test_format_regex(response, kwargs, extra, score):
    assert format_regex("f", response, None, extra, **kwargs) == score


@pytest.mark.parametrize(
    ("length", "kwargs", "score"),
    [
        (10, {"max_length": 20}, 0.0),
        (30, {"max_length": 20}, -0.5),
        (100, {"max_length": 20}, -1.0),
        (30, {"max_length": 20, "penalty": 0.2}, -0.1),
    ],
)
def test_length_penalty(length, kwargs, score):
    assert length_penalty("l", "x" * length, None, {}, **kwargs) == pytest.approx(score)


def test_weighted_reports_each_component_unweighted():
    reward = weighted({"gsm8k": 1.0, "length_penalty": 0.5}, {"length_penalty": {"max_length": 10}})
    assert reward("d", "#### 7 and more text", "7", {}) == {
        "score": pytest.approx(1.0 - 0.5),
        "gsm8k": 1.0,
        "length_penalty": -1.0,
    }


def test_weighted_refuses_unknown_components():
    with pytest.raises(KeyError, match="unknown built-in reward 'gsm9k'"):
        weighted({"gsm9k": 1.0})


def test_the_registry_is_closed_and_complete():
    assert set(BUILTIN_REWARDS) == {
        "exact_match",
        "numeric",
        "arith",
        "gsm8k",
        "boxed_math",
        "countdown",
        "format_regex",
        "length_penalty",
        "verl_default",
        "verl_code",
    }
    with pytest.raises(TypeError):
        BUILTIN_REWARDS["mine"] = arith  # type: ignore[index]


@pytest.mark.parametrize("name", sorted(BUILTIN_REWARDS))
def test_each_template_source_is_the_builtin_itself(name):
    loaded = load_reward(builtin_source(name))
    cases = {
        "countdown": ("<answer>6*4</answer>", COUNTDOWN),
        "numeric": ("2.0", "2"),
        "boxed_math": (r"\boxed{2}", "2"),
        "gsm8k": ("#### 2", "2"),
        "verl_default": ("#### 2", "2"),
        "verl_code": ("```python\nprint(2)\n```", '{"inputs": [""], "outputs": ["2"]}'),
    }
    response, truth = cases.get(name, ("2", "2"))
    source = {"verl_default": "openai/gsm8k", "verl_code": "apps"}.get(name, "d")
    expected = BUILTIN_REWARDS[name](source, response, truth, {})
    assert loaded.fn is not None
    assert loaded.fn(source, response, truth, {}) == expected
    assert "import trainer" not in builtin_source(name)  # standalone, runs anywhere


def test_the_inprocess_scorer_turns_failures_into_error_results():
    scorer = InProcessScorer(
        lambda data_source, solution_str, ground_truth, extra_info: {
            "score": 1.0 / int(solution_str)
        }
    )
    ok, crash, invalid = scorer.score_batch([request("2"), request("0"), request("nan")])
    assert (ok.score, ok.error) == (0.5, "")
    assert crash.error == "exception: ZeroDivisionError: float division by zero"
    assert invalid.error.startswith("exception: ValueError")


def test_the_inprocess_scorer_prefers_the_batch_form():
    def batch(data_sources, solution_strs, ground_truths, extra_infos):
        return [float(s == g) for s, g in zip(solution_strs, ground_truths, strict=True)]

    scorer = InProcessScorer(None, batch)
    assert [r.score for r in scorer.score_batch([request("a", "a"), request("a", "b")])] == [
        1.0,
        0.0,
    ]
    wrong_length = InProcessScorer(None, lambda **kw: [])
    assert [r.error for r in wrong_length.score_batch([request("a"), request("b")])] == [
        "invalid return: the batch function returned 0 values for 1 rows; return a list with "
        "one reward per row, in order (scored alone after the batch call of its 2 rows failed)"
    ] * 2

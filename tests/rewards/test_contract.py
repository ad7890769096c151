"""What a reward function may return, and how results are counted."""

from __future__ import annotations

import math

import pytest

from trainer.rewards.contract import (
    RewardResult,
    error_rate,
    error_result,
    normalise,
    result_from_wire,
)


@pytest.mark.parametrize(
    ("value", "score"), [(1, 1.0), (0.25, 0.25), (True, 1.0), (False, 0.0), (-3, -3.0)]
)
def test_finite_numbers_are_scores(value, score):
    assert normalise(value) == RewardResult(score=score, components={})


def test_numpy_scalars_are_accepted():
    np = pytest.importorskip("numpy")
    assert normalise(np.float32(0.5)).score == 0.5
    assert normalise(np.int64(2)).score == 2.0
    assert normalise(np.bool_(True)).score == 1.0
    assert normalise({"score": np.float64(1.0), "acc": np.int32(1)}).components == {"acc": 1.0}


def test_a_dict_gives_the_score_and_its_components():
    result = normalise({"score": 0.5, "accuracy": 1, "format": False})
    assert (result.score, result.components, result.error) == (
        0.5,
        {"accuracy": 1.0, "format": 0.0},
        "",
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (math.nan, "return value is nan; rewards must be finite"),
        (math.inf, "return value is inf"),
        ("1.0", "str of length 3 ('1.0')"),
        ([1.0], "list of length 1"),
        (None, "NoneType"),
        (10**400, "cannot be a float"),
        ({"accuracy": 1.0}, "dict has no 'score' key (keys: accuracy)"),
        ({"score": "high"}, "score is str"),
        ({"score": 1.0, "pred": object()}, "extra info 'pred' is object"),
        ({"score": 1.0, "acc": math.nan}, "component 'acc' is nan"),
        ({"score": 1.0, 3: 1.0}, "component name 3 must be a non-empty string"),
        ({"score": 1.0, **{f"c{i}": 0.0 for i in range(64)}}, "dict has 65 keys; at most 64"),
        (object(), "return value is object"),
    ],
)
def test_anything_else_is_an_error_with_a_reason(value, message):
    result = normalise(value)
    assert result.score == 0.0
    assert result.error.startswith("invalid return: ")
    assert message in result.error


def test_a_huge_list_is_described_without_printing_it():
    result = normalise(list(range(10**6)))
    assert len(result.error) < 200


def test_results_from_another_process_are_validated_again():
    assert result_from_wire({"score": 1.0, "components": {"a": 2.0}, "error": ""}).components == {
        "a": 2.0
    }
    assert result_from_wire({"score": math.nan, "components": {}, "error": ""}).error
    assert result_from_wire({"score": 1.0, "components": {"a": "x"}, "error": ""}).error
    assert result_from_wire(["not", "a", "dict"]).error == "invalid result message from the sandbox"
    assert result_from_wire({"score": 9.0, "components": {}, "error": "boom"}).score == 0.0


def test_error_rate_counts_errors():
    results = [RewardResult(1.0), error_result("x"), RewardResult(0.0), error_result("y")]
    assert error_rate(results) == 0.5
    assert error_rate([]) == 0.0


@pytest.mark.parametrize(
    ("key", "what"),
    [("acc\x00", "a NUL character at offset 3"), ("\udc80x", "a lone surrogate (U+DC80)")],
)
def test_component_names_postgres_cannot_store_are_refused(key, what):
    for result in (
        normalise({"score": 1.0, key: 1.0}),
        result_from_wire({"score": 1.0, "components": {key: 1.0}, "error": ""}),
    ):
        assert result.score == 0.0 and result.components == {}
        assert result.error.startswith("invalid return: component name")
        assert what in result.error
        result.error.encode("utf-8")  # stored as is: no surrogate left
        assert "\x00" not in result.error


def test_error_messages_quoting_user_text_escape_nul_and_surrogates():
    result = error_result("exception: ValueError: a\x00b\udc80c", output="x\x00y")
    assert result.error == "exception: ValueError: a\\x00b\\udc80c"
    assert result.output == "x\\x00y"

"""Reward modules written the way verl's scorers are, run unchanged: a dict return's
numbers and booleans are components, its strings, None, lists and dicts the sample's extra
info (bounded, checked per row, naming the key), and `reward.kwargs` reach the function
as keyword arguments (verl's `custom_reward_function.reward_kwargs`), per-sample and
batch, in the sandbox and in-process."""

from __future__ import annotations

import pytest

from tests.rewards.conftest import needs_full_sandbox, request
from trainer.config.schema import RewardConfig
from trainer.rewards import InProcessScorer, RewardCodeError, SandboxLimits, SandboxPool
from trainer.rewards.contract import MAX_EXTRA_BYTES, normalise
from trainer.rewards.loader import load_reward

LIMITS = SandboxLimits(timeout_s=2.0, memory_mb=256, output_bytes=4096, max_processes=16)

# verl's DAPO scorer returns {"score", "acc", "pred"}; this one adds a list and None, and
# takes a keyword argument as verl's reward_kwargs would pass it.
VERL_SAMPLE = r"""
import re


def compute_score(data_source, solution_str, ground_truth, extra_info=None, penalty=1.0,
                  **kwargs):
    found = re.findall(r"-?\d+", solution_str)
    pred = found[-1] if found else None
    acc = pred == str(ground_truth)
    if solution_str == "nul":
        pred = "a\x00b"
    if solution_str == "huge":
        pred = "x" * 5000
    return {
        "score": 1.0 if acc else -penalty,
        "acc": acc,
        "pred": pred,
        "numbers": found[-3:],
        "source": {"data_source": data_source, "tag": kwargs.get("tag")},
    }
"""

VERL_BATCH = r"""
def compute_score(data_sources, solution_strs, ground_truths, extra_infos, scale=1.0,
                  **kwargs):
    return [
        {"score": scale * float(s == str(g)), "acc": s == str(g), "pred": s.strip(),
         "kwarg_names": sorted(kwargs)}
        for s, g in zip(solution_strs, ground_truths)
    ]
"""

KWARGS = {"penalty": 0.5, "tag": "from-verl"}


def _check_sample_results(results):
    right, wrong, malformed, nul, huge = results
    assert right.error == "" and right.score == 1.0
    assert right.components == {"acc": 1.0}
    assert right.extra == {
        "pred": "42",
        "numbers": ["6", "7", "42"],
        "source": {"data_source": "math_dapo", "tag": "from-verl"},
    }
    assert wrong.score == -0.5 and wrong.components == {"acc": 0.0}
    assert wrong.extra["pred"] == "41"
    assert malformed.score == -0.5 and malformed.extra["pred"] is None
    assert malformed.extra["numbers"] == []
    assert nul.score == 0.0 and nul.extra == {}
    assert nul.error.startswith("invalid return: extra info 'pred' contains a NUL character")
    assert huge.score == 0.0
    assert "extra info takes" in huge.error and f"at most {MAX_EXTRA_BYTES} per row" in huge.error
    assert "'pred'" in huge.error


SAMPLE_REQUESTS = [
    request("6 * 7 = 42", 42, data_source="math_dapo"),
    request("6 * 7 = 41", 42, data_source="math_dapo"),
    request("no idea", 42, data_source="math_dapo"),
    request("nul", 42, data_source="math_dapo"),
    request("huge", 42, data_source="math_dapo"),
]


def test_dict_returns_keep_strings_none_and_lists_as_extra_info():
    result = normalise({"score": 1.0, "acc": True, "pred": "42", "none": None, "xs": [1, "a"]})
    assert result.error == ""
    assert result.components == {"acc": 1.0}
    assert result.extra == {"pred": "42", "none": None, "xs": [1, "a"]}


def test_an_unstorable_extra_value_fails_its_row_naming_the_key():
    result = normalise({"score": 1.0, "why": ["fine", {"deep": "\udc80"}]})
    assert result.score == 0.0
    assert "extra info 'why'[1]['deep'] contains a lone surrogate" in result.error
    assert "is set" in normalise({"score": 1.0, "s": {1, 2}}).error


def test_a_verl_style_module_runs_in_process_with_its_kwargs():
    loaded = load_reward(VERL_SAMPLE, "compute_score")
    scorer = InProcessScorer(loaded.fn, loaded.batch_fn, kwargs=KWARGS)
    _check_sample_results(scorer.score_batch(SAMPLE_REQUESTS))


def test_a_verl_style_batch_module_runs_in_process_with_its_kwargs():
    loaded = load_reward(VERL_BATCH, "compute_score")
    scorer = InProcessScorer(loaded.fn, loaded.batch_fn, kwargs={"scale": 2.0, "other": 1})
    good, bad = scorer.score_batch([request("7", 7), request("8", 7)])
    assert (good.score, good.components, good.extra) == (
        2.0,
        {"acc": 1.0},
        {"pred": "7", "kwarg_names": ["other"]},
    )
    assert (bad.score, bad.components["acc"], bad.extra["pred"]) == (0.0, 0.0, "8")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"ground_truth": 1}, "reward.kwargs.ground_truth: 'ground_truth' is one of verl's own"),
        ({"bad name": 1}, "is not a valid Python argument name"),
        ({"x": float("nan")}, "reward.kwargs.x is nan; numbers must be finite"),
        ({"x": {1: 2}}, "reward.kwargs.x has a non-string key 1"),
        ({"x": "y" * 5000}, "reward.kwargs takes 5008 bytes as JSON; at most 4096"),
    ],
)
def test_reward_kwargs_are_checked_where_they_are_set(kwargs, message):
    with pytest.raises(ValueError, match="reward.kwargs") as caught:
        RewardConfig(kwargs=kwargs)
    assert message in str(caught.value)
    with pytest.raises(ValueError, match="reward.kwargs") as caught:
        InProcessScorer(lambda **kw: 1.0, kwargs=kwargs)
    assert message in str(caught.value)


def test_verl_reward_kwargs_translate_to_reward_kwargs():
    from trainer.config.verl import translate_verl_overrides

    pairs, unknown = translate_verl_overrides(
        [("custom_reward_function.reward_kwargs", {"format_score": 0.1})]
    )
    assert unknown == []
    assert pairs == [("reward.kwargs", {"format_score": 0.1})]


@needs_full_sandbox()
def test_a_verl_style_module_runs_in_the_sandbox_with_its_kwargs(no_leftover_processes):
    with SandboxPool(VERL_SAMPLE, workers=1, limits=LIMITS, kwargs=KWARGS) as pool:
        _check_sample_results(pool.score_batch(SAMPLE_REQUESTS))


@needs_full_sandbox()
def test_a_verl_style_batch_module_runs_in_the_sandbox_with_its_kwargs(no_leftover_processes):
    with SandboxPool(VERL_BATCH, workers=1, limits=LIMITS, kwargs={"scale": 3.0}) as pool:
        assert pool.batch
        good, bad = pool.score_batch([request("5", "5"), request(" 6 ", "5")])
    assert (good.score, good.components, good.extra) == (
        3.0,
        {"acc": 1.0},
        {"pred": "5", "kwarg_names": []},
    )
    assert (bad.score, bad.components, bad.extra["pred"]) == (0.0, {"acc": 0.0}, "6")


@needs_full_sandbox()
def test_the_sandbox_refuses_kwargs_that_replace_verls_arguments():
    with pytest.raises(RewardCodeError, match="one of verl's own arguments"):
        SandboxPool(VERL_SAMPLE, workers=1, limits=LIMITS, kwargs={"extra_info": {}})

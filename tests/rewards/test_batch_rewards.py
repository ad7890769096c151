"""Batch reward functions without the sandbox: detecting verl's batch signature, and the
in-process scorer (chunks, the length check, the per-row fallback)."""

from __future__ import annotations

import pytest

from tests.rewards.conftest import request
from trainer.config.schema import RewardConfig
from trainer.rewards import (
    BUILTIN_REWARDS,
    InProcessScorer,
    RewardCodeError,
    builtin_source,
    load_reward,
    make_scorer,
)
from trainer.rewards.builtins import TEMPLATE_NAMES
from trainer.rewards.signature import BATCH_ARGS, find_reward, is_batch_form, parameter_names

VERL_BATCH = (
    "def compute_score(data_sources, solution_strs, ground_truths, extra_infos, **kwargs):\n"
    "    return [float(s == str(g)) for s, g in zip(solution_strs, ground_truths)]\n"
)


def _namespace(code: str) -> dict[str, object]:
    namespace: dict[str, object] = {}
    exec(compile(code, "<reward>", "exec"), namespace)
    return namespace


def test_verls_batch_signature_under_the_configured_name_is_the_batch_function():
    fn, batch_fn = find_reward(_namespace(VERL_BATCH), "compute_score")
    assert fn is None and batch_fn is not None
    loaded = load_reward(VERL_BATCH)
    assert loaded.fn is None and loaded.batch_fn is not None


@pytest.mark.parametrize(
    ("parameters", "batch"),
    [
        (("data_source", "solution_str", "ground_truth", "extra_info"), False),
        (BATCH_ARGS, True),
        (("data_sources", "solution_strs"), True),  # partial: refused by the batch check
        ((), False),  # **kwargs alone: the per-sample form, as verl's default manager calls it
    ],
)
def test_naming_any_plural_argument_makes_the_batch_form(parameters, batch):
    assert is_batch_form(parameters) is batch


def test_parameter_names_come_from_the_code_object():
    def reward(data_sources, solution_strs, *args, ground_truths=None, extra_infos=None, **kw):
        return []

    assert parameter_names(reward) == (
        "data_sources",
        "solution_strs",
        "ground_truths",
        "extra_infos",
    )
    assert parameter_names(len) == ()


def test_a_partial_batch_signature_names_what_is_missing():
    code = "def compute_score(data_sources, solution_strs, ground_truths):\n    return []\n"
    with pytest.raises(RewardCodeError, match="no parameter named 'extra_infos'"):
        load_reward(code)


def test_a_keyword_catch_all_alone_stays_the_per_sample_form():
    loaded = load_reward("def compute_score(**kwargs):\n    return 1.0\n")
    assert loaded.fn is not None and loaded.batch_fn is None


def test_two_batch_functions_in_one_module_are_refused():
    code = VERL_BATCH + VERL_BATCH.replace("compute_score(", "compute_score_batch(")
    with pytest.raises(RewardCodeError, match="keep one batch function"):
        load_reward(code)


def test_the_inprocess_scorer_calls_a_batch_function_once_per_chunk():
    calls: list[int] = []

    def batch(data_sources, solution_strs, ground_truths, extra_infos):
        calls.append(len(solution_strs))
        return [{"score": float(s == g), "rows": len(solution_strs)} for s, g in
                zip(solution_strs, ground_truths, strict=True)]  # fmt: skip

    scorer = InProcessScorer(None, batch, chunk_size=4)
    results = scorer.score_batch([request(str(i), str(i % 2)) for i in range(10)])
    assert calls == [4, 4, 2]
    assert [r.score for r in results] == [1.0, 1.0] + [0.0] * 8
    assert scorer.batch_fallbacks == 0


def test_inprocess_a_raising_row_fails_alone_and_the_others_score():
    def batch(data_sources, solution_strs, ground_truths, extra_infos):
        return [1.0 / int(s) for s in solution_strs]

    scorer = InProcessScorer(None, batch)
    ok, bad, other = scorer.score_batch([request("2"), request("0"), request("4")])
    assert [(r.score, r.error) for r in (ok, other)] == [(0.5, ""), (0.25, "")]
    assert bad.error == (
        "exception: ZeroDivisionError: float division by zero "
        "(scored alone after the batch call of its 3 rows failed)"
    )
    assert scorer.batch_fallbacks == 1


def test_inprocess_a_wrong_length_is_retried_row_by_row():
    def drops_unparseable_rows(data_sources, solution_strs, ground_truths, extra_infos):
        return [float(s) for s in solution_strs if s.isdigit()]

    scorer = InProcessScorer(None, drops_unparseable_rows)
    results = scorer.score_batch([request("1"), request("x"), request("3")])
    assert [r.score for r in results] == [1.0, 0.0, 3.0]
    assert results[1].error.startswith(
        "invalid return: the batch function returned 0 values for 1 rows"
    )


def test_inprocess_an_invalid_value_fails_its_row_without_a_retry():
    scorer = InProcessScorer(None, lambda **kw: [1.0, float("nan")])
    ok, bad = scorer.score_batch([request("a"), request("b")])
    assert (ok.score, ok.error) == (1.0, "")
    assert bad.error == "invalid return: return value is nan; rewards must be finite"
    assert scorer.batch_fallbacks == 0


def test_the_trainer_scores_a_verl_batch_file_in_process(tmp_path):
    path = tmp_path / "reward.py"
    path.write_text(VERL_BATCH)
    cfg = RewardConfig(function="custom", custom_path=str(path), executor="inprocess")
    scorer = make_scorer(cfg)
    assert isinstance(scorer, InProcessScorer) and scorer.batch_fn is not None
    results = scorer.score_batch([request("1", 1), request("2", 3)])
    assert [(r.score, r.error) for r in results] == [(1.0, ""), (0.0, "")]


def test_the_batch_template_scores_like_exact_match_and_is_not_a_built_in():
    loaded = load_reward(builtin_source("exact_match_batch"))
    assert loaded.fn is None and loaded.batch_fn is not None
    rows = [("12", "12"), (" 12 ", 12), ("Yes", "yes"), ("13", "12")]
    scores = InProcessScorer(None, loaded.batch_fn).score_batch([request(s, g) for s, g in rows])
    assert [r.score for r in scores] == [BUILTIN_REWARDS["exact_match"]("d", s, g) for s, g in rows]
    assert "exact_match_batch" in TEMPLATE_NAMES and "exact_match_batch" not in BUILTIN_REWARDS

"""The one resolution table: with no reward chosen, each row is scored by the built-in its
data source names (verl's sources by verl's default reward or its code scorer, the
demo's by its own), and data whose source has none is refused, naming it."""

from __future__ import annotations

import pytest

from trainer.config import RunConfig
from trainer.config.reward_section import RewardConfig
from trainer.rewards import make_scorer
from trainer.rewards.by_data_source import SCORER_KEY
from trainer.rewards.contract import RewardRequest
from trainer.rewards.resolution import (
    SCORER_BY_DATA_SOURCE,
    UnresolvedRewardError,
    require_scorers,
    scorer_for,
)
from trainer.rewards.templates import verl_code, verl_default

GSM8K_RIGHT = RewardRequest(
    data_source="openai/gsm8k",
    solution_str="She sells 16 - 3 - 4 = 9 eggs, 9 * 2 = 18 dollars.\n#### 18",
    ground_truth="18",
    extra_info={},
)
MATH_RIGHT = RewardRequest(
    data_source="DigitalLearningGmbH/MATH-lighteval",
    solution_str="Half of the cases succeed, so the answer is $\\boxed{\\frac{1}{2}}$.",
    ground_truth="\\frac{1}{2}",
    extra_info={},
)


def test_a_config_chooses_no_reward_unless_told():
    assert RunConfig().reward.function is None
    assert RewardConfig().function_source_name() == "by_data_source"


def test_verls_data_sources_resolve_to_verls_default_reward_and_the_demos_to_their_own():
    for source in (*verl_default.GSM8K, *verl_default.MATH, *verl_default.DAPO):
        assert scorer_for(source) == "verl_default"
    assert scorer_for("aime2025") == "verl_default"  # verl's prefix rule
    assert (scorer_for("arith"), scorer_for("countdown")) == ("arith", "countdown")
    # verl's code rows run the response against their test cases (prime_code).
    assert verl_code.DATA_SOURCES == verl_default.CODE
    for source in verl_code.DATA_SOURCES:
        assert scorer_for(source) == "verl_code"
    # verl's symbolic graders need sympy: no scorer here.
    for source in (*verl_default.SYMBOLIC, "default", ""):
        assert scorer_for(source) is None
    assert set(SCORER_BY_DATA_SOURCE.values()) == {
        "arith",
        "countdown",
        "verl_default",
        "verl_code",
    }


def test_rows_of_an_unknown_data_source_are_refused_naming_each_with_its_rows():
    sources = ["openai/gsm8k", "default", "default", "my_task"]
    with pytest.raises(UnresolvedRewardError) as raised:
        require_scorers(None, sources, "the training rows")
    message = str(raised.value)
    assert "'default' (2 rows)" in message and "'my_task' (1 row)" in message
    assert "the training rows" in message and "Choose a reward" in message
    assert raised.value.unknown == {"default": 2, "my_task": 1}
    assert require_scorers("exact_match", sources) == {}  # a chosen reward scores any data
    assert require_scorers(None, ["arith", "openai/gsm8k"]) == {
        "arith": "arith",
        "openai/gsm8k": "verl_default",
    }


@pytest.mark.parametrize("executor", ["sandbox", "inprocess"])
def test_gsm8k_and_math_answers_score_one_through_the_resolved_reward_and_say_by_what(executor):
    scorer = make_scorer(RewardConfig(executor=executor), workers=1)
    unknown = RewardRequest(
        data_source="default", solution_str="1", ground_truth="1", extra_info={}
    )
    arith_row = RewardRequest(
        data_source="arith", solution_str="7", ground_truth="7", extra_info={}
    )
    try:
        results = scorer.score_batch([GSM8K_RIGHT, MATH_RIGHT, arith_row, unknown])
    finally:
        scorer.close()
    gsm8k, math, arith, refused = results
    assert (gsm8k.score, math.score, arith.score) == (1.0, 1.0, 1.0), results
    assert [r.extra[SCORER_KEY] for r in (gsm8k, math, arith)] == [
        "verl_default",
        "verl_default",
        "arith",
    ]
    assert refused.score == 0.0 and "'default'" in refused.error
    # What the old default did: `arith` reads the first integer, so the MATH answer is 0.
    with_arith = make_scorer(RewardConfig(function="arith", executor="inprocess"))
    assert with_arith.score_batch([MATH_RIGHT])[0].score == 0.0

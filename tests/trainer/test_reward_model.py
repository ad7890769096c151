"""Learned reward models (`reward.model`) and rewards combined from several sources."""

from __future__ import annotations

import pytest
import torch

from trainer.config.schema import RewardConfig
from trainer.demo.model import _prompt_text
from trainer.demo.toy_data import ARITH_DEFAULT, arith_answer, arith_problems, arith_prompt
from trainer.models.loading import load_tokenizer
from trainer.models.reward_model import RewardModelScorer
from trainer.rewards.contract import RewardRequest
from trainer.rewards.inprocess import InProcessScorer
from trainer.training.loop import Trainer
from trainer.training.reward_sources import CombinedScorer, RewardSource, make_reward_scorer

from .conftest import demo_config
from .test_training import RecordingReporter

CPU = torch.device("cpu")


def arith_requests(demo_assets, answers, step: int = 7) -> list[RewardRequest]:
    tokenizer = load_tokenizer(demo_assets / "model")
    requests = []
    for (a, op, b), answer in zip(arith_problems(ARITH_DEFAULT)[::step], answers, strict=False):
        question = arith_prompt(a, op, b)
        requests.append(
            RewardRequest(
                data_source="arith",
                solution_str=answer(a, op, b),
                ground_truth=str(arith_answer(a, op, b)),
                extra_info={},
                prompt=_prompt_text(tokenizer, question),
            )
        )
    return requests


def test_the_demo_reward_model_ranks_correct_answers_above_wrong_ones(
    demo_assets, demo_reward_model
):
    cfg = RewardConfig.model_validate({"model": {"path": str(demo_reward_model)}})
    scorer = RewardModelScorer(cfg.model, CPU)
    every = len(arith_problems(ARITH_DEFAULT))

    def scores(answer) -> list[float]:
        results = scorer.score_batch(arith_requests(demo_assets, [answer] * every, step=1))
        assert all(r.ok for r in results)
        return [r.score for r in results]

    right = scores(lambda a, op, b: str(arith_answer(a, op, b)))
    restated = scores(lambda a, op, b: arith_prompt(a, op, b) + str(arith_answer(a, op, b)))
    wrong = scores(lambda a, op, b: str(arith_answer(a, op, b) + 2))

    def ranked(worse: list[float]) -> float:
        return sum(r > w for r, w in zip(right, worse, strict=True)) / every

    print(f"correct above restated {ranked(restated):.0%}, above wrong {ranked(wrong):.0%}")
    # The style the rule rejects always loses (measured 100%); a wrong number usually
    # does (measured 72%: the head reads a frozen backbone, see trainer.demo.reward_model).
    assert ranked(restated) >= 0.95
    assert ranked(wrong) >= 0.6


def test_the_combined_reward_is_the_weighted_sum_of_its_sources_each_reported(
    demo_assets, demo_reward_model
):
    # Three sources: the rule, the reward model, and another model (the same folder
    # reading only the last 12 tokens, so its scores differ).
    cfg = RewardConfig.model_validate(
        {
            "function": "arith",
            "function_weight": 0.5,
            "model": {"path": str(demo_reward_model), "weight": 2.0},
            "extra_models": [
                {"path": str(demo_reward_model), "name": "judge", "weight": -0.75, "max_length": 12}
            ],
        }
    )
    scorer = make_reward_scorer(cfg, CPU)
    answers = [lambda a, op, b: str(arith_answer(a, op, b)), lambda a, op, b: "7"] * 10
    results = scorer.score_batch(arith_requests(demo_assets, answers))
    assert {r.sources["arith"] for r in results} == {0.0, 1.0}
    assert any(r.sources["judge"] != pytest.approx(r.sources["reward_model"]) for r in results)
    for result in results:
        assert set(result.sources) == {"arith", "reward_model", "judge"}
        sources = result.sources
        expected = 0.5 * sources["arith"] + 2.0 * sources["reward_model"] - 0.75 * sources["judge"]
        assert result.score == pytest.approx(expected)
        for name in ("reward_model", "judge"):
            assert result.components[name] == sources[name]


def test_with_no_reward_function_the_reward_model_scores_alone_as_in_verl(
    demo_assets, demo_reward_model
):
    from trainer.rewards.resolution import require_scorers

    cfg = RewardConfig.model_validate({"model": {"path": str(demo_reward_model)}})
    scorer = make_reward_scorer(cfg, CPU)
    results = scorer.score_batch(arith_requests(demo_assets, [lambda a, op, b: "7"] * 4))
    assert all(set(r.sources) == {"reward_model"} for r in results)
    assert all(r.score == pytest.approx(r.sources["reward_model"]) for r in results)
    # Rows are not looked up by data source: verl's hh-rlhf rows have no rule-based scorer.
    assert require_scorers(None, ["Dahoas/full-hh-rlhf"], reward_models=1) == {}


@pytest.mark.parametrize(
    ("reward", "message"),
    [
        ({"model": {"path": "/rm"}, "extra_models": [{"path": "/j"}]}, "reward_model is used"),
        (
            {"function": "arith", "extra_models": [{"path": "/j", "name": "arith"}]},
            "arith is used more than once",
        ),
        ({"extra_models": [{"name": "judge"}]}, "reward.extra_models.0.path is empty"),
        ({"extra_models": [{"path": f"/j{i}", "name": f"j{i}"} for i in range(5)]}, "at most 4"),
    ],
    ids=[
        "two-models",
        "model-named-like-the-function",
        "no-path",
        "too-many",
    ],
)
def test_reward_sources_need_distinct_names_and_paths(reward, message):
    with pytest.raises(ValueError, match=message):
        RewardConfig.model_validate(reward)


def test_an_extra_model_on_its_own_group_needs_the_ray_runtime_naming_its_section(
    demo_reward_model,
):
    cfg = RewardConfig.model_validate(
        {
            "executor": "inprocess",
            "extra_models": [{"path": str(demo_reward_model), "placement": "worker_group"}],
        }
    )
    with pytest.raises(ValueError, match=r"reward.extra_models.0.placement='worker_group'"):
        make_reward_scorer(cfg, CPU)


def test_a_reward_model_worker_group_needs_the_ray_runtime(demo_reward_model):
    cfg = RewardConfig.model_validate(
        {
            "executor": "inprocess",
            "model": {"path": str(demo_reward_model), "placement": "worker_group"},
        }
    )
    with pytest.raises(ValueError, match="placement='worker_group' runs the reward model on"):
        make_reward_scorer(cfg, CPU)


def test_a_source_that_fails_a_row_makes_that_row_an_error_naming_it():
    def picky(data_source, solution_str, ground_truth, extra_info):
        if solution_str == "boom":
            raise ValueError("cannot score boom")
        return 1.0

    scorer = CombinedScorer(
        [
            RewardSource("first", 1.0, InProcessScorer(lambda **kw: 2.0)),
            RewardSource("picky", 1.0, InProcessScorer(picky)),
        ]
    )
    requests = [RewardRequest("d", text, "", {}) for text in ("fine", "boom")]
    fine, boom = scorer.score_batch(requests)
    assert fine.ok and fine.score == 3.0 and fine.sources == {"first": 2.0, "picky": 1.0}
    assert not boom.ok and boom.error.startswith("picky:") and "cannot score boom" in boom.error


def test_a_ppo_step_with_the_reward_model_reports_every_component(
    demo_assets, demo_reward_model, tmp_path
):
    cfg = demo_config(
        demo_assets,
        tmp_path,
        "trainer.total_steps=1",
        "trainer.val_before_train=false",
        "data.val_files=[]",
        "data.train_batch_size=8",
        "actor.ppo_mini_batch_size=8",
        "rollout.max_new_tokens=8",
        f"reward.model.path={demo_reward_model}",
        "reward.function_weight=0.5",
        f"reward.extra_models=[{{path: {demo_reward_model}, name: judge, weight: 0.25, "
        "max_length: 12}]",
        preset="ppo-rm-tiny",
    )
    reporter = RecordingReporter()
    Trainer(cfg, reporter).fit()
    metrics = reporter.steps[1]
    combined = (
        0.5 * metrics["critic/score/arith/mean"]
        + metrics["critic/score/reward_model/mean"]
        + 0.25 * metrics["critic/score/judge/mean"]
    )
    assert metrics["critic/score/mean"] == pytest.approx(combined, abs=1e-5)
    for model in ("reward_model", "judge"):
        mean = metrics[f"critic/score/{model}/mean"]
        assert metrics[f"reward/{model}/mean"] == pytest.approx(mean, abs=1e-5)
    assert "reward/arith/mean" in metrics  # what the studio's dominance alert watches


RULE_VAL_KEY = "val-aux/arith/arith/mean@1"  # the rule's accuracy on greedy answers
MODEL_VAL_KEY = "val-aux/arith/reward_model/mean@1"


@pytest.fixture
def one_thread():
    """Torch on one thread: on a loaded 2-core machine a second thread makes each step
    several times slower (measured 9 s against 2 s); the results are the same."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.slow
def test_ppo_with_the_demo_reward_model_raises_its_score_and_the_rule_accuracy(
    demo_assets, demo_reward_model, tmp_path, one_thread
):
    # The preset as shipped: the rule weighs 4x (with 1x the policy learns what the demo
    # reward model over-rates, a short digit, and the rule accuracy falls after ~20 steps).
    # Measured over 30 steps (greedy validation on 256 prompts), seeds 0..3 (trainer.seed
    # and torch's): rule accuracy 0.168 -> 0.394, 0.335, 0.458, 0.271 (+0.10 at least);
    # the reward model's mean score -0.030 -> 4.51, 4.51, 4.62, 4.87. About 100 s on one
    # thread of the loaded 2-core machine.
    torch.manual_seed(0)
    cfg = demo_config(
        demo_assets,
        tmp_path,
        f"reward.model.path={demo_reward_model}",
        preset="ppo-rm-tiny",
    )
    assert (cfg.reward.function_weight, cfg.trainer.total_steps) == (4.0, 30)
    reporter = RecordingReporter()
    Trainer(cfg, reporter).fit()
    start, end = reporter.steps[0], reporter.steps[cfg.trainer.total_steps]
    print(
        f"rule accuracy {start[RULE_VAL_KEY]:.3f} -> {end[RULE_VAL_KEY]:.3f}, "
        f"reward model {start[MODEL_VAL_KEY]:.3f} -> {end[MODEL_VAL_KEY]:.3f}"
    )
    assert end[MODEL_VAL_KEY] - start[MODEL_VAL_KEY] > 2.0
    assert end[RULE_VAL_KEY] - start[RULE_VAL_KEY] > 0.06
    combined = 4.0 * end[RULE_VAL_KEY] + end[MODEL_VAL_KEY]
    assert end["val-core/arith/reward/mean@1"] == pytest.approx(combined, abs=1e-4)
    assert reporter.statuses == ["running", "succeeded"]


def test_each_model_placed_on_a_worker_group_gets_a_group_of_its_own():
    from trainer.config import load_config
    from trainer.distributed import reward_model_groups, uses_distributed

    cfg = load_config(
        overrides=[
            "reward.model.path=/rm",
            "reward.extra_models=[{path: /a, name: a}, "
            "{path: /b, name: b, placement: worker_group, resources: {num_workers: 2}}]",
        ]
    )
    [(section, model)] = reward_model_groups(cfg)
    assert (section, model.name, model.resources.num_workers) == ("reward.extra_models.1", "b", 2)
    assert uses_distributed(cfg)  # the group is on Ray even with one trainer worker

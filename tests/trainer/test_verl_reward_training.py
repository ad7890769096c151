"""Short training runs with reward modules written as verl's are: a DAPO-style dict
return (a float score, a boolean, a string, a list) and `reward_kwargs` set through verl's
own override, per-sample and batch, in the sandbox. The extras reach the reported
samples; the boolean and numbers are charted as `reward/<key>/mean`."""

from __future__ import annotations

import pytest

from tests.rewards.conftest import needs_full_sandbox
from trainer.training.loop import Trainer

from .conftest import demo_config
from .test_training import RecordingReporter

needs_sandbox = needs_full_sandbox()

PER_SAMPLE = """
import re

def compute_score(data_source, solution_str, ground_truth, extra_info=None, wrong=-1.0,
                  **kwargs):
    found = re.findall(r"-?\\d+", solution_str)
    pred = found[0] if found else None
    acc = pred == str(ground_truth)
    return {"score": 1.0 if acc else wrong, "acc": acc, "pred": pred, "numbers": found[:3],
            "tag": kwargs["tag"]}
"""

BATCH = """
import re

def compute_score(data_sources, solution_strs, ground_truths, extra_infos, wrong=-1.0,
                  **kwargs):
    out = []
    for solution, truth in zip(solution_strs, ground_truths):
        found = re.search(r"-?\\d+", solution)
        acc = found is not None and found.group() == str(truth)
        out.append({"score": 1.0 if acc else wrong, "acc": acc,
                    "pred": found.group() if found else None, "rows": len(solution_strs)})
    return out
"""


def run(demo_assets, tmp_path, code: str, *overrides: str) -> RecordingReporter:
    reward = tmp_path / "verl_reward.py"
    reward.write_text(code)
    cfg = demo_config(
        demo_assets,
        tmp_path,
        "trainer.total_steps=1",
        "trainer.val_before_train=false",
        "data.val_files=[]",
        "data.train_batch_size=4",
        "actor.ppo_mini_batch_size=4",
        "rollout.n=4",
        "rollout.max_new_tokens=8",
        "custom_reward_function.path=" + str(reward),
        *overrides,
        preset="grpo-tiny-arith",
    )
    reporter = RecordingReporter()
    Trainer(cfg, reporter).fit()
    return reporter


@needs_sandbox
def test_a_per_sample_verl_reward_with_reward_kwargs_trains_and_keeps_its_extras(
    demo_assets, tmp_path
):
    reporter = run(
        demo_assets,
        tmp_path,
        PER_SAMPLE,
        "custom_reward_function.reward_kwargs={wrong: -0.5, tag: verl}",
    )
    metrics = reporter.steps[1]
    assert metrics["reward/error_rate"] == 0.0
    accuracy = metrics["reward/acc/mean"]  # the boolean, charted as a component
    assert 0.0 <= accuracy <= 1.0
    # wrong answers score the keyword argument's -0.5, right ones 1.0
    assert metrics["critic/score/mean"] == pytest.approx(accuracy * 1.0 + (1 - accuracy) * -0.5)
    assert reporter.samples_seen
    for record in reporter.samples_seen:
        assert set(record.reward_extra) == {"pred", "numbers", "tag"}
        assert record.reward_extra["tag"] == "verl"
        assert record.score == (1.0 if record.components["acc"] == 1.0 else -0.5)
        assert "pred" not in record.components and "acc" in record.components


@needs_sandbox
def test_a_batch_verl_reward_keeps_the_same_return_rules(demo_assets, tmp_path):
    reporter = run(
        demo_assets,
        tmp_path,
        BATCH,
        "reward_model.reward_manager=batch",
        "custom_reward_function.reward_kwargs={wrong: 0.0}",
    )
    metrics = reporter.steps[1]
    assert metrics["reward/error_rate"] == 0.0
    assert metrics["reward/rows/mean"] > 1.0
    assert "reward/acc/mean" in metrics and "reward/pred/mean" not in metrics
    assert all("pred" in r.reward_extra for r in reporter.samples_seen)

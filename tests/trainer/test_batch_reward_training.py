"""A training step with verl's batch reward function: the trainer scores through the
sandbox transparently (the reward sources path), one call per chunk of responses."""

from __future__ import annotations

from tests.rewards.conftest import needs_full_sandbox
from trainer.training.loop import Trainer

from .conftest import demo_config
from .test_training import RecordingReporter

# The arith reward in verl's batch form; "rows" is the length of the call's lists.
BATCH_ARITH = """
import re

def compute_score(data_sources, solution_strs, ground_truths, extra_infos, **kwargs):
    scores = []
    for solution, truth in zip(solution_strs, ground_truths):
        found = re.search(r"-?\\d+", solution)
        exact = float(found is not None and found.group() == str(truth))
        scores.append({"score": exact, "rows": float(len(solution_strs))})
    return scores
"""


@needs_full_sandbox()
def test_a_grpo_step_scores_with_a_verl_batch_reward_in_the_sandbox(demo_assets, tmp_path):
    reward = tmp_path / "batch_reward.py"
    reward.write_text(BATCH_ARITH)
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
        "custom_reward_function.path=" + str(reward),  # verl's override, translated
        "reward_model.reward_manager=batch",
        preset="grpo-tiny-arith",
    )
    assert cfg.reward.function == "custom" and cfg.reward.executor == "sandbox"
    reporter = RecordingReporter()
    Trainer(cfg, reporter).fit()
    metrics = reporter.steps[1]
    assert metrics["reward/error_rate"] == 0.0
    assert 0.0 <= metrics["critic/score/mean"] <= 1.0
    assert metrics["reward/rows/mean"] > 1.0  # called on lists of responses, not one by one

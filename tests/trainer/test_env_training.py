"""End-to-end multi-turn GRPO on CPU: the demo tools model learns to use the calculator."""

from __future__ import annotations

import pytest
import torch

from trainer.training.loop import Trainer

from .conftest import tools_config
from .test_training import RecordingReporter

ACCURACY = "val-core/arith/reward/mean@1"


@pytest.mark.slow
def test_grpo_tools_arith_raises_validation_accuracy_by_calling_the_calculator(
    demo_tools_assets, tmp_path
):
    torch.manual_seed(0)
    cfg = tools_config(demo_tools_assets, tmp_path)
    reporter = RecordingReporter()
    Trainer(cfg, reporter).fit()
    last = cfg.trainer.total_steps
    start, end = reporter.steps[0][ACCURACY], reporter.steps[last][ACCURACY]
    calls_first = reporter.steps[1]["multi_turn/tool_calls/mean"]
    calls_last = reporter.steps[last]["multi_turn/tool_calls/mean"]
    print(
        f"validation accuracy {start:.3f} -> {end:.3f}; calls/episode {calls_first:.2f} -> "
        f"{calls_last:.2f}"
    )
    # Observed 0.141 -> 0.922 at seeds 0, 1 and 2 (greedy, 64 validation prompts).
    assert end >= start + 0.5
    assert calls_last > calls_first
    assert reporter.statuses == ["running", "succeeded"]

    # The calls ran in the sandbox, and the samples carry their turns and the mask.
    episodes = [s for s in reporter.samples_seen if s.split == "train" and s.turns]
    tool_turns = [t for s in episodes for t in s.turns or () if t["role"] == "tool"]
    # Malformed calls are answered too, with no tool name.
    assert tool_turns and {t["name"] for t in tool_turns} <= {"calculator", ""}
    assert any(t["content"].lstrip("-").isdigit() and "error" not in t for t in tool_turns)
    masked = [s.token_data for s in episodes if s.token_data and 0 in s.token_data["mask"]]
    assert masked
    for data in masked:
        assert len(data["mask"]) == len(data["token_ids"])


def test_a_python_environment_run_trains_a_step_on_the_program_task(demo_tools_assets, tmp_path):
    from trainer.demo.tools_program import write_tools_program

    train, test = write_tools_program(tmp_path / "data", n_train=8, n_test=4)
    cfg = tools_config(
        demo_tools_assets,
        tmp_path,
        f"data.train_files=[{train}]",
        f"data.val_files=[{test}]",
        "rollout.multi_turn.environment=python",
        "rollout.multi_turn.tool_timeout_s=2",
        "data.train_batch_size=2",
        "actor.ppo_mini_batch_size=2",
        "rollout.n=2",
        "trainer.total_steps=1",
        "trainer.val_before_train=false",
    )
    reporter = RecordingReporter()
    Trainer(cfg, reporter).fit()
    assert reporter.statuses == ["running", "succeeded"]
    assert "python" in reporter.samples_seen[0].prompt  # the tool is in the prompt
    assert all(s.turns for s in reporter.samples_seen)

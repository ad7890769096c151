"""A run that chose no reward scores each row by its data source, records the scorer on
every sample, and refuses data whose source has no scorer before step 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.verl_data import parquet_bytes, verl_rows
from trainer.rewards.resolution import UnresolvedRewardError
from trainer.training.loop import Trainer

from .conftest import demo_config
from .test_training import RecordingReporter

SMALL_RUN = (
    "trainer.total_steps=1",
    "trainer.val_before_train=false",
    "data.train_batch_size=4",
    "actor.ppo_mini_batch_size=4",
    "rollout.n=2",
    "rollout.max_new_tokens=8",
)


def _data(tmp_path: Path, sources: tuple[str, str]) -> tuple[Path, Path]:
    gsm8k = verl_rows(["2", "3", "4", "5"], sources[0], "What is {i} + 1?")
    math = verl_rows(["\\frac{1}{2}"] * 4, sources[1], "What is {i}/{i} halved?")
    rows = [row for pair in zip(gsm8k, math, strict=True) for row in pair]
    train, val = tmp_path / "train.parquet", tmp_path / "val.parquet"
    train.write_bytes(parquet_bytes(rows))
    val.write_bytes(parquet_bytes(rows[:2]))
    return train, val


def test_a_run_with_no_reward_scores_gsm8k_and_math_rows_with_verls_default(demo_assets, tmp_path):
    train, val = _data(tmp_path, ("openai/gsm8k", "DigitalLearningGmbH/MATH-lighteval"))
    cfg = demo_config(
        demo_assets, tmp_path, f"data.train_files=[{train}]", f"data.val_files=[{val}]", *SMALL_RUN
    )
    assert cfg.reward.function is None
    reporter = RecordingReporter()
    Trainer(cfg, reporter).fit()
    assert reporter.statuses == ["running", "succeeded"]
    assert {s.data_source for s in reporter.samples_seen} == {
        "openai/gsm8k",
        "DigitalLearningGmbH/MATH-lighteval",
    }
    assert {s.reward_extra.get("scorer") for s in reporter.samples_seen} == {"verl_default"}
    assert not [s for s in reporter.samples_seen if s.error]
    # Each sample names its row of the file (GSM8K rows are the even ones).
    for sample in reporter.samples_seen:
        assert sample.row is not None
        even = sample.data_source == "openai/gsm8k"
        assert sample.row % 2 == (0 if even else 1)


def test_data_of_a_source_without_a_scorer_is_refused_before_step_1(demo_assets, tmp_path):
    train, val = _data(tmp_path, ("openai/gsm8k", "my_task"))
    cfg = demo_config(
        demo_assets, tmp_path, f"data.train_files=[{train}]", f"data.val_files=[{val}]", *SMALL_RUN
    )
    reporter = RecordingReporter()
    with pytest.raises(UnresolvedRewardError, match=r"'my_task' \(5 rows\)"):
        Trainer(cfg, reporter)
    assert not reporter.steps
    chosen = demo_config(
        demo_assets,
        tmp_path,
        f"data.train_files=[{train}]",
        f"data.val_files=[{val}]",
        "reward.function=exact_match",
        *SMALL_RUN,
    )
    Trainer(chosen, reporter).state.scorer.close()  # a chosen reward scores any data

"""End-to-end training on CPU with the offline demo model."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch

from trainer.config import preset_names
from trainer.reporting.base import MultiReporter, SampleRecord
from trainer.reporting.jsonl import JsonlReporter, read_records
from trainer.training.loop import INPROCESS_WARNING, Trainer

from .conftest import demo_config, tools_config


class RecordingReporter:
    """Keeps every call in memory so tests can assert on what a run reported."""

    def __init__(self) -> None:
        self.steps: dict[int, dict[str, float]] = {}
        self.samples_seen: list[SampleRecord] = []
        self.statuses: list[str] = []
        self.checkpoints: list[int] = []

    def metrics(self, step: int, values: dict[str, float]) -> None:
        self.steps.setdefault(step, {}).update(values)

    def samples(self, step: int, samples: list[SampleRecord]) -> None:
        self.samples_seen += samples

    def log(self, level: str, message: str) -> None:
        pass

    def checkpoint(self, step: int, path: str) -> None:
        self.checkpoints.append(step)

    def status(self, status: Any, detail: str = "") -> None:
        self.statuses.append(status)

    def progress(self, step: int, total: int) -> None:
        pass

    def close(self) -> None:
        pass


def _params_checksum(trainer: Trainer) -> float:
    return float(sum(p.detach().double().sum() for p in trainer.state.actor.parameters()))


@pytest.mark.slow
def test_grpo_raises_validation_reward_on_the_arith_task(demo_assets, tmp_path):
    torch.manual_seed(0)
    cfg = demo_config(demo_assets, tmp_path, preset="grpo-tiny-arith")
    reporter = RecordingReporter()
    Trainer(cfg, reporter).fit()
    key = "val-core/arith/reward/mean@1"
    start = reporter.steps[0][key]
    end = reporter.steps[cfg.trainer.total_steps][key]
    print(f"validation reward {start:.3f} -> {end:.3f}")
    assert start < 0.25
    assert end > 0.6
    assert reporter.statuses == ["running", "succeeded"]


def test_ppo_with_gae_runs_two_steps_with_finite_losses(demo_assets, tmp_path):
    cfg = demo_config(
        demo_assets,
        tmp_path,
        "trainer.total_steps=2",
        "data.train_batch_size=4",
        "actor.ppo_mini_batch_size=2",
        "trainer.val_before_train=false",
        preset="ppo-gae",
    )
    reporter = RecordingReporter()
    trainer = Trainer(cfg, reporter)
    critic_before = float(sum(p.detach().sum() for p in trainer.state.critic.parameters()))
    before = _params_checksum(trainer)
    trainer.fit()
    for step in (1, 2):
        metrics = reporter.steps[step]
        for key in ("actor/pg_loss", "critic/vf_loss", "actor/grad_norm", "critic/values/mean"):
            assert math.isfinite(metrics[key]), key
    assert _params_checksum(trainer) != before
    assert float(sum(p.detach().sum() for p in trainer.state.critic.parameters())) != critic_before


@pytest.mark.parametrize("preset", preset_names())
def test_every_preset_runs_one_step(demo_assets, tmp_path, preset, request):
    overrides = (
        "trainer.total_steps=1",
        "trainer.val_before_train=false",
        "data.max_val_samples=4",
        "data.train_batch_size=2",
        "actor.ppo_mini_batch_size=2",
        "rollout.max_new_tokens=8",
    )
    cfg = demo_config(demo_assets, tmp_path, *overrides, preset=preset)
    if cfg.rollout.multi_turn.enabled:  # the preset names var/: use the tests' tools model
        cfg = tools_config(request.getfixturevalue("demo_tools_assets"), tmp_path, *overrides)
    if cfg.algorithm.overlong.enabled:
        cfg.algorithm.overlong.buffer_len = 2
    if cfg.reward.model.path:  # the preset names var/: use the tests' demo reward model
        cfg.reward.model.path = str(request.getfixturevalue("demo_reward_model"))
    reporter = RecordingReporter()
    trainer = Trainer(cfg, reporter)
    before = _params_checksum(trainer)
    trainer.fit()
    assert math.isfinite(reporter.steps[1]["actor/pg_loss"])
    assert reporter.statuses[-1] == "succeeded"
    if reporter.steps[1]["critic/advantages/max"] != reporter.steps[1]["critic/advantages/min"]:
        assert _params_checksum(trainer) != before


RESUME_KEYS = (
    "actor/pg_loss",
    "actor/grad_norm",
    "actor/entropy",
    "critic/score/mean",
    "response_length/mean",
    "actor/ppo_kl",
)


def _resume_config(demo_assets, tmp_path):
    # Two optimizer steps per batch so old log-probs, clipping and the update RNG all matter.
    return demo_config(
        demo_assets,
        tmp_path,
        "trainer.total_steps=4",
        "checkpoint.save_every=2",
        "data.train_batch_size=4",
        "actor.ppo_mini_batch_size=2",
        "rollout.n=4",
        "trainer.val_before_train=false",
        "data.max_val_samples=4",
        "algorithm.kl_ctrl.type=adaptive",
        "algorithm.use_kl_in_reward=true",
    )


def test_resume_continues_exactly_like_an_uninterrupted_run(demo_assets, tmp_path):
    straight = RecordingReporter()
    Trainer(_resume_config(demo_assets, tmp_path / "a"), straight).fit()

    interrupted = RecordingReporter()
    Trainer(_resume_config(demo_assets, tmp_path / "b"), interrupted).fit(stop_after=2)
    resumed = RecordingReporter()
    trainer = Trainer(_resume_config(demo_assets, tmp_path / "b"), resumed)
    trainer.fit()
    assert sorted(s for s in resumed.steps if s > 0) == [3, 4]
    for step in (3, 4):
        for key in RESUME_KEYS:
            assert resumed.steps[step][key] == straight.steps[step][key], (step, key)
        assert (
            resumed.steps[step]["actor/reward_kl_penalty_coeff"]
            == straight.steps[step]["actor/reward_kl_penalty_coeff"]
        )


def test_jsonl_log_is_appended_across_restarts(demo_assets, tmp_path):
    log_path = tmp_path / "run.jsonl"
    cfg = _resume_config(demo_assets, tmp_path)
    first = JsonlReporter(log_path)
    Trainer(cfg, MultiReporter([first])).fit(stop_after=2)
    first.close()
    second = JsonlReporter(log_path)
    Trainer(cfg, MultiReporter([second])).fit()
    second.close()
    steps = [r["step"] for r in read_records(log_path) if r["type"] == "metrics"]
    assert steps[:2] == [1, 2] and 3 in steps and 4 in steps


class LogRecordingReporter(RecordingReporter):
    def __init__(self) -> None:
        super().__init__()
        self.logs: list[tuple[str, str]] = []

    def log(self, level: str, message: str) -> None:
        self.logs.append((level, message))


def test_a_run_scores_in_the_sandbox_unless_inprocess_is_asked_for_and_then_warns(
    demo_assets, tmp_path
):
    from trainer.rewards import InProcessScorer, SandboxPool

    quiet = LogRecordingReporter()
    sandboxed = Trainer(demo_config(demo_assets, tmp_path, "reward.function=arith"), quiet)
    try:
        assert isinstance(sandboxed.state.scorer, SandboxPool)
        assert not [m for _, m in quiet.logs if "inprocess" in m]
    finally:
        sandboxed.state.scorer.close()

    warned = LogRecordingReporter()
    trusted = Trainer(
        demo_config(demo_assets, tmp_path, "reward.function=arith", "reward.executor=inprocess"),
        warned,
    )
    assert isinstance(trusted.state.scorer, InProcessScorer)
    assert ("warning", INPROCESS_WARNING) in warned.logs
    assert trusted.cfg.model_dump()["reward"]["executor"] == "inprocess"  # in meta.json too


def test_validation_scored_by_a_named_builtin_whatever_the_run_trains_on(demo_assets, tmp_path):
    """reward.validation_function: a run trained on another reward validates with the
    named built-in, so its score is the one an arith run gets from the same responses."""

    def score(name: str, *overrides: str) -> float:
        cfg = demo_config(
            demo_assets,
            tmp_path / name,
            "data.max_val_samples=8",
            *overrides,
            preset="grpo-tiny-arith",
        )
        trainer = Trainer(cfg, RecordingReporter())
        try:
            [value] = [v for k, v in trainer.validate().items() if k.startswith("val-core/")]
        finally:
            for scorer in (trainer.state.scorer, trainer.validation_scorer):
                if scorer is not None:
                    scorer.close()
        return value

    arith = score("arith", "reward.function=arith")
    lengths = score("lengths", "reward.function=length_penalty")
    judged = score("judged", "reward.function=length_penalty", "reward.validation_function=arith")
    assert judged == arith  # the same greedy responses, scored by arith
    assert lengths != arith

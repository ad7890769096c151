"""One demo training step per algorithm path the step wires beyond a name: each estimator
and loss of verl's registries, the token baselines' probabilities, rollout correction
(decoupled and bypass), PF-PPO. Finite losses and a changed policy."""

from __future__ import annotations

import math

import pytest

from trainer.training.loop import Trainer

from .conftest import demo_config
from .test_training import RecordingReporter, _params_checksum

RUNS = {
    "grpo_passk": ("algorithm.adv_estimator=grpo_passk",),
    "opo": ("algorithm.adv_estimator=opo",),
    "gdpo": ("algorithm.adv_estimator=gdpo",),
    "optimal_token_baseline": ("algorithm.adv_estimator=optimal_token_baseline",),
    "tir_optimal_token_baseline": ("algorithm.adv_estimator=tir_optimal_token_baseline",),
    "sapo": ("actor.policy_loss=sapo",),
    "clip_cov": ("actor.policy_loss=clip_cov",),
    "kl_cov": ("actor.policy_loss=kl_cov",),
    "geo_mean": ("actor.policy_loss=geo_mean",),
    "dppo_tv": ("actor.policy_loss=dppo_tv",),
    "dppo_kl": ("actor.policy_loss=dppo_kl",),
    "dro": ("actor.policy_loss=dro", "actor.policy_loss_options.dro_beta=0.1"),
    "rollout_correction": (
        "algorithm.rollout_correction.rollout_is=token",
        "algorithm.rollout_correction.rollout_rs=token_k1",
        "algorithm.rollout_correction.rollout_rs_threshold=2.0",
    ),
    "bypass_mode_reinforce": (
        "algorithm.rollout_correction.bypass_mode=true",
        "algorithm.rollout_correction.loss_type=reinforce",
        "algorithm.rollout_correction.rollout_is=sequence",
    ),
    "pf_ppo": ("algorithm.adv_estimator=gae", "algorithm.use_pf_ppo=true"),
}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_one_demo_step_trains_with_finite_losses(demo_assets, tmp_path, name):
    cfg = demo_config(
        demo_assets,
        tmp_path,
        *RUNS[name],
        "trainer.total_steps=1",
        "trainer.val_before_train=false",
        "data.max_val_samples=2",
        "data.train_batch_size=4",
        "actor.ppo_mini_batch_size=4",
        "rollout.max_new_tokens=8",
        preset="grpo-tiny-arith",
    )
    reporter = RecordingReporter()
    trainer = Trainer(cfg, reporter)
    before = _params_checksum(trainer)
    trainer.fit()
    metrics = reporter.steps[1]
    assert math.isfinite(metrics["actor/pg_loss"])
    assert reporter.statuses[-1] == "succeeded"
    assert _params_checksum(trainer) != before
    if name == "rollout_correction":
        # The hf engine samples with the trainer's own forward: the two agree.
        assert metrics["rollout_corr/rollout_is_mean"] == pytest.approx(1.0, abs=1e-3)
        assert metrics["rollout_corr/rollout_rs_masked_fraction"] == 0.0
    if name == "bypass_mode_reinforce":  # only the bypass loss reports these in the update
        assert math.isfinite(metrics["rollout_corr/kl"])
        assert metrics["rollout_corr/rollout_is_mean"] == pytest.approx(1.0, abs=1e-2)

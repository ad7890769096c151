"""verl's algorithm keys (estimators, policy losses and their settings, rollout correction,
PF-PPO) translate onto RunConfig and validate."""

from __future__ import annotations

import pytest

from trainer.config import load_config
from trainer.config.verl import classify, translate_verl

AR = "actor_rollout_ref.actor"


def _config(pairs: list[tuple[str, object]]):
    out = translate_verl(pairs)
    assert out.unknown == [] and out.refused == [], (out.unknown, out.refused)
    return load_config(overrides=[f"{k}={v}" for k, v in out.pairs])


@pytest.mark.parametrize(
    ("key", "value", "path", "expected"),
    [
        (
            f"{AR}.policy_loss.clip_cov_ratio",
            0.001,
            "actor.policy_loss_options.clip_cov_ratio",
            0.001,
        ),
        (f"{AR}.policy_loss.clip_cov_lb", 0.5, "actor.policy_loss_options.clip_cov_lb", 0.5),
        (f"{AR}.policy_loss.clip_cov_ub", 4.0, "actor.policy_loss_options.clip_cov_ub", 4.0),
        (f"{AR}.policy_loss.kl_cov_ratio", 0.01, "actor.policy_loss_options.kl_cov_ratio", 0.01),
        (f"{AR}.policy_loss.ppo_kl_coef", 0.5, "actor.policy_loss_options.ppo_kl_coef", 0.5),
        (f"{AR}.tau_pos", 2.0, "actor.policy_loss_options.tau_pos", 2.0),
        (f"{AR}.tau_neg", 1.5, "actor.policy_loss_options.tau_neg", 1.5),
        (
            "algorithm.rollout_correction.rollout_is",
            "sequence",
            "algorithm.rollout_correction.rollout_is",
            "sequence",
        ),
        (
            "algorithm.rollout_correction.rollout_is_threshold",
            3.0,
            "algorithm.rollout_correction.rollout_is_threshold",
            "3.0",
        ),
        (
            "algorithm.pf_ppo.reweight_method",
            "max_min",
            "algorithm.pf_ppo.reweight_method",
            "max_min",
        ),
        ("algorithm.pf_ppo.weight_pow", 1.5, "algorithm.pf_ppo.weight_pow", 1.5),
    ],
)
def test_each_algorithm_key_of_verl_lands_on_its_field(key, value, path, expected):
    cfg = _config([(key, value)])
    section, _, field = path.rpartition(".")
    node = cfg
    for part in section.split("."):
        node = getattr(node, part)
    assert getattr(node, field) == expected


@pytest.mark.parametrize(
    "name",
    [
        "gae",
        "grpo",
        "grpo_vectorized",
        "grpo_passk",
        "reinforce_plus_plus",
        "reinforce_plus_plus_baseline",
        "remax",
        "rloo",
        "rloo_vectorized",
        "opo",
        "gpg",
        "gdpo",
        "optimal_token_baseline",
        "tir_optimal_token_baseline",
    ],
)
def test_every_estimator_verl_registers_is_accepted_by_name(name):
    assert _config([("algorithm.adv_estimator", name)]).algorithm.adv_estimator == name


@pytest.mark.parametrize(
    ("loss", "extra", "ours"),
    [
        ("vanilla", [], "ppo"),
        ("gspo", [], "gspo"),
        ("sapo", [], "sapo"),
        ("gpg", [], "gpg"),
        ("clip_cov", [], "clip_cov"),
        ("kl_cov", [], "kl_cov"),
        ("geo_mean", [], "geo_mean"),
        ("cispo", [], "cispo"),
        ("dppo_tv", [], "dppo_tv"),
        ("dppo_kl", [], "dppo_kl"),
        ("dro", [(f"{AR}.policy_loss.dro_beta", 0.1)], "dro"),
        ("bypass_mode", [("algorithm.rollout_correction.bypass_mode", True)], "bypass_mode"),
    ],
)
def test_every_policy_loss_verl_registers_is_accepted_by_name(loss, extra, ours):
    cfg = _config([(f"{AR}.policy_loss.loss_mode", loss), *extra])
    assert cfg.actor.policy_loss == ours


def test_rollout_correction_bypass_and_rejection_keys_translate_together():
    cfg = _config(
        [
            ("algorithm.rollout_correction.bypass_mode", True),
            ("algorithm.rollout_correction.loss_type", "reinforce"),
            ("algorithm.rollout_correction.rollout_rs", "token_k1,seq_max_k3"),
            ("algorithm.rollout_correction.rollout_rs_threshold", "0.5_2.0,0.1"),
            ("algorithm.rollout_correction.rollout_is_batch_normalize", True),
        ]
    )
    rc = cfg.algorithm.rollout_correction
    assert (rc.bypass_mode, rc.loss_type, rc.rollout_rs) == (
        True,
        "reinforce",
        "token_k1,seq_max_k3",
    )
    assert rc.rollout_is_batch_normalize is True


def test_pf_ppo_is_accepted_with_gae_and_refused_with_another_estimator_by_name():
    assert _config([("algorithm.adv_estimator", "gae"), ("algorithm.use_pf_ppo", True)])
    with pytest.raises(ValueError, match="use_pf_ppo resamples the batch after GAE only"):
        _config([("algorithm.adv_estimator", "grpo"), ("algorithm.use_pf_ppo", True)])


def test_dro_without_its_beta_is_refused_naming_the_key():
    with pytest.raises(ValueError, match="dro_beta"):
        _config([(f"{AR}.policy_loss.loss_mode", "dro")])


def test_an_unknown_rejection_criterion_names_the_allowed_ones():
    with pytest.raises(ValueError, match="allowed: token_k1"):
        _config(
            [
                ("algorithm.rollout_correction.rollout_rs", "token_k9"),
                ("algorithm.rollout_correction.rollout_rs_threshold", 2.0),
            ]
        )


def test_gdpo_reward_components_are_refused_with_the_reason():
    found = classify("algorithm.gdpo_reward_keys")
    assert found is not None and found.kind == "refused"
    assert "one score" in found.reason

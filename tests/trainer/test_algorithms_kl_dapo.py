"""KL estimators and controllers, DAPO helpers and masked statistics, by hand."""

from __future__ import annotations

import math
from typing import Any, get_args

import pytest
import torch
from torch.testing import assert_close

from trainer.algorithms import (
    KL_ESTIMATORS,
    AdaptiveKLController,
    FixedKLController,
    apply_kl_in_reward,
    groups_with_reward_spread,
    kl_penalty,
    make_kl_controller,
    masked_mean,
    masked_sum,
    masked_var,
    masked_whiten,
    overlong_penalty,
)
from trainer.config.schema import KLControlConfig, KLEstimator


def t(rows: list[Any]) -> torch.Tensor:
    return torch.tensor(rows, dtype=torch.float32)


def scalar(x: float) -> torch.Tensor:
    return torch.tensor(x, dtype=torch.float32)


# logp - ref = +.5, -.5, -20, +15 (the last two exercise the k3 clamp)
LOGP = t([[0.5, -0.5, -20.0, 15.0]])
REF = torch.zeros_like(LOGP)


def test_registry_holds_exactly_the_configurable_kl_estimators():
    assert set(KL_ESTIMATORS) == set(get_args(KLEstimator))


@pytest.mark.parametrize(
    ("estimator", "expected"),
    [
        ("k1", [0.5, -0.5, -20.0, 15.0]),
        ("abs", [0.5, 0.5, 20.0, 15.0]),
        ("k2", [0.125, 0.125, 200.0, 112.5]),  # .5 * d^2
        # exp(ref - logp) - (ref - logp) - 1, clamped to [-10, 10]:
        #   d = .5 : e^-.5 + .5 - 1 = .1065307;  d = -.5: e^.5 - .5 - 1 = .1487213
        #   d = -20: e^20 - 21 -> 10;            d = 15 : e^-15 + 15 - 1 = 14 -> 10
        ("k3", [math.exp(-0.5) - 0.5, math.exp(0.5) - 1.5, 10.0, 10.0]),
        ("low_var_kl", [math.exp(-0.5) - 0.5, math.exp(0.5) - 1.5, 10.0, 10.0]),
    ],
)
def test_each_kl_estimator_matches_its_formula(estimator: KLEstimator, expected: list[float]):
    assert_close(kl_penalty(LOGP, REF, estimator), t([expected]))


def test_k3_gradient_stays_finite_at_extreme_log_ratios():
    logp = t([[-30.0, 0.5]]).requires_grad_(True)
    kl_penalty(logp, torch.zeros_like(logp), "k3").sum().backward()
    assert logp.grad is not None
    # clamped entry: no gradient; d/dlogp (e^-d + d - 1) at d = .5 is 1 - e^-.5
    assert_close(logp.grad, t([[0.0, 1 - math.exp(-0.5)]]))


def test_kl_in_reward_subtracts_beta_times_kl_on_valid_tokens_only():
    rewards = t([[0, 0, 1], [0, 2, 0]])
    old = t([[0.1, 0.2, 0.3], [0.4, 0.2, 5.0]])  # 5.0 sits on padding
    mask = t([[1, 1, 1], [1, 1, 0]])
    new, mean_kl = apply_kl_in_reward(rewards, old, torch.zeros_like(old), mask, 0.5, "k1")
    # r - .5 * kl: [[-.05, -.1, .85], [-.2, 1.9, 0]]; the padded reward is untouched
    assert_close(new, t([[-0.05, -0.1, 0.85], [-0.2, 1.9, 0.0]]))
    # mean over sequences of token-mean KL: (.2 + .3) / 2
    assert mean_kl == pytest.approx(0.25)


def test_adaptive_kl_controller_moves_beta_by_the_clipped_proportional_error():
    ctrl = AdaptiveKLController(init_kl_coef=0.001, target_kl=0.1, horizon=10000)
    ctrl.update(current_kl=0.15, n_steps=256)
    # error clip(.15 / .1 - 1, -.2, .2) = .2 -> beta *= 1 + .2 * 256 / 10000 = 1.00512
    assert ctrl.value == pytest.approx(0.001 * 1.00512)
    ctrl.update(current_kl=0.09, n_steps=100)
    # error .09 / .1 - 1 = -.1 -> beta *= 1 - .1 * 100 / 10000 = .999
    assert ctrl.value == pytest.approx(0.001 * 1.00512 * 0.999)
    ctrl.update(current_kl=0.0, n_steps=10000)
    # error clip(-1) = -.2 -> beta *= .8
    assert ctrl.value == pytest.approx(0.001 * 1.00512 * 0.999 * 0.8)


def test_adaptive_kl_beta_survives_a_resume_through_its_state_dict():
    cfg = KLControlConfig(type="adaptive", kl_coef=0.001, target_kl=0.1, horizon=10000)
    before = make_kl_controller(cfg)
    before.update(current_kl=1.0, n_steps=5000)  # beta *= 1.1
    resumed = make_kl_controller(cfg)
    assert resumed.value == pytest.approx(0.001)
    resumed.load_state_dict(before.state_dict())
    assert isinstance(resumed, AdaptiveKLController)
    assert resumed.value == pytest.approx(0.0011)


def test_fixed_kl_controller_never_moves():
    ctrl = make_kl_controller(KLControlConfig(type="fixed", kl_coef=0.02))
    assert isinstance(ctrl, FixedKLController)
    ctrl.update(current_kl=10.0, n_steps=1000)
    ctrl.load_state_dict({"value": 5.0})  # the configured coefficient stays authoritative
    assert ctrl.value == 0.02


def test_dynamic_sampling_drops_every_response_of_a_zero_spread_group():
    scores = t([1.0, 1.0, 0.0, 1.0, 0.5, 0.5, 2.0])
    groups = torch.tensor([0, 0, 1, 1, 2, 2, 3])
    keep = groups_with_reward_spread(scores, groups)
    # group 0: 1, 1 -> drop; group 1: 0, 1 -> keep; group 2: .5, .5 -> drop;
    # group 3 is a group of one: kept, as verl's DAPO trainer keeps it
    assert keep.tolist() == [False, False, True, True, False, False, True]
    assert keep.dtype == torch.bool


def test_overlong_penalty_ramps_linearly_inside_the_buffer():
    lengths = torch.tensor([10, 16, 17, 20, 22])
    # max 20, buffer 4 -> free up to 16: min(-(L - 16) / 4 * factor, 0)
    assert_close(overlong_penalty(lengths, 20, 4, 1.0), t([0.0, 0.0, -0.25, -1.0, -1.5]))
    assert_close(overlong_penalty(lengths, 20, 4, 0.5), t([0.0, 0.0, -0.125, -0.5, -0.75]))


def test_masked_statistics_ignore_padding():
    x = t([[1.0, 2.0, 100.0], [3.0, float("nan"), 4.0]])
    mask = t([[1, 1, 0], [1, 0, 1]])
    assert_close(masked_sum(x, mask), scalar(10.0))
    assert_close(masked_mean(x, mask), scalar(2.5))
    assert_close(masked_mean(x, mask, dim=-1), t([1.5, 3.5]))
    # values 1, 2, 3, 4: mean 2.5, squared deviations 2.25 + .25 + .25 + 2.25 = 5
    assert_close(masked_var(x, mask, unbiased=False), scalar(5 / 4))
    assert_close(masked_var(x, mask), scalar(5 / 3))
    std = math.sqrt(5 / 3 + 1e-8)
    whitened = masked_whiten(x, mask)
    assert_close(whitened[mask.bool()], t([-1.5, -0.5, 0.5, 1.5]) / std)
    unshifted = masked_whiten(x, mask, shift_mean=False)
    assert_close(unshifted[mask.bool()], t([-1.5, -0.5, 0.5, 1.5]) / std + 2.5)


def test_masked_mean_of_nothing_is_zero_and_unbiased_var_of_one_token_is_an_error():
    x = t([[1.0, 2.0]])
    assert_close(masked_mean(x, torch.zeros_like(x)), scalar(0.0))
    with pytest.raises(ValueError, match="at least 2"):
        masked_var(x, t([[1, 0]]))

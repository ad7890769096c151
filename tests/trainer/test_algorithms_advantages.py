"""Advantage estimators against hand-computed values on tiny batches (B <= 6, T = 3)."""

from __future__ import annotations

import math
from typing import Any, get_args

import pytest
import torch
from torch.testing import assert_close

from trainer.algorithms import (
    ADVANTAGE_ESTIMATORS,
    AdvantageInputs,
    compute_advantages,
    scores_to_token_rewards,
)
from trainer.config.estimators import ESTIMATOR_TRAITS
from trainer.config.schema import AdvantageEstimator, RunConfig

EPS = 1e-6  # GRPO's std epsilon


def t(rows: list[Any]) -> torch.Tensor:
    return torch.tensor(rows, dtype=torch.float32)


def inputs(
    rewards: torch.Tensor,
    mask: torch.Tensor,
    groups: list[int],
    values: torch.Tensor | None = None,
    gamma: float = 1.0,
    lam: float = 1.0,
    norm_by_std: bool = True,
) -> AdvantageInputs:
    # ReMax's greedy rewards and the token baselines' probabilities, fixed and harmless
    # for the estimators that do not read them.
    rows = rewards.shape[0]
    return AdvantageInputs(
        token_rewards=rewards,
        response_mask=mask,
        group_index=torch.tensor(groups, dtype=torch.long),
        values=values,
        gamma=gamma,
        lam=lam,
        norm_by_std=norm_by_std,
        reward_baselines=torch.full((rows,), 0.25),
        old_logprobs=torch.full_like(rewards, -1.0),
        sum_pi_squared=torch.full_like(rewards, 0.3),
    )


def outcome(scores: list[float], mask: torch.Tensor) -> torch.Tensor:
    return scores_to_token_rewards(t(scores), mask)


# Six responses, T = 3. Groups (non-contiguous ids on purpose):
#   7: scores 1, 2, 3     lengths 3, 2, 1
#   3: scores 4, 4        lengths 3, 3   (no spread)
#   5: score 2.5          length 2       (a group of one)
MASK6 = t([[1, 1, 1], [1, 1, 0], [1, 0, 0], [1, 1, 1], [1, 1, 1], [1, 1, 0]])
GROUPS6 = [7, 7, 7, 3, 3, 5]
SCORES6 = [1.0, 2.0, 3.0, 4.0, 4.0, 2.5]


def broadcast(per_response: list[float], mask: torch.Tensor) -> torch.Tensor:
    return t(per_response).unsqueeze(-1) * mask


def test_registry_holds_exactly_the_configurable_estimators():
    assert set(ADVANTAGE_ESTIMATORS) == set(get_args(AdvantageEstimator))


def test_every_estimator_declares_its_traits():
    assert set(ESTIMATOR_TRAITS) == set(get_args(AdvantageEstimator))


def test_the_critic_and_the_group_size_check_follow_the_traits():
    assert RunConfig.model_validate({"algorithm": {"adv_estimator": "gae"}}).needs_critic
    with pytest.raises(ValueError, match="rollout.n >= 2"):
        RunConfig.model_validate({"algorithm": {"adv_estimator": "rloo"}, "rollout": {"n": 1}})
    lone = {"algorithm": {"adv_estimator": "reinforce_plus_plus"}, "rollout": {"n": 1}}
    assert not RunConfig.model_validate(lone).needs_critic


def test_scores_land_on_the_last_valid_token_and_empty_responses_get_none():
    mask = t([[1, 1, 1], [1, 1, 0], [0, 0, 0]])
    rewards = scores_to_token_rewards(t([1.0, 2.0, 3.0]), mask)
    assert_close(rewards, t([[0, 0, 1], [0, 2, 0], [0, 0, 0]]))


def test_grpo_normalises_each_group_by_its_mean_and_unbiased_std():
    adv, returns = ADVANTAGE_ESTIMATORS["grpo"](inputs(outcome(SCORES6, MASK6), MASK6, GROUPS6))
    # group 7: mean 2, unbiased std sqrt((1 + 0 + 1) / 2) = 1 -> A = (s - 2) / (1 + 1e-6)
    # group 3: equal scores -> A = 0
    # group 5 (one response): mean 0, std 1 -> A = 2.5 / (1 + 1e-6)
    a = 1 / (1 + EPS)
    expected = broadcast([-a, 0.0, a, 0.0, 0.0, 2.5 * a], MASK6)
    assert_close(adv, expected)
    assert_close(returns, expected)


def test_grpo_gives_a_group_of_one_its_raw_score_as_advantage():
    mask = t([[1, 1, 0]])
    adv, _ = ADVANTAGE_ESTIMATORS["grpo"](inputs(outcome([0.75], mask), mask, [0]))
    assert_close(adv, t([[0.75 / (1 + EPS), 0.75 / (1 + EPS), 0.0]]))


def test_grpo_gives_groups_with_equal_rewards_exactly_zero_advantage():
    # In float32 the mean of [.9, .9, .9] is .9 - 6e-8, so a naive (s - mean) / (0 + 1e-6)
    # would give every response an advantage of ~0.06.
    mask = t([[1, 1, 1]] * 3)
    adv, _ = ADVANTAGE_ESTIMATORS["grpo"](inputs(outcome([0.9, 0.9, 0.9], mask), mask, [0, 0, 0]))
    assert_close(adv, torch.zeros(3, 3), atol=0.0, rtol=0.0)


def test_grpo_without_std_normalisation_is_dr_grpo_mean_centring():
    adv, _ = ADVANTAGE_ESTIMATORS["grpo"](
        inputs(outcome(SCORES6, MASK6), MASK6, GROUPS6, norm_by_std=False)
    )
    # group 7: s - 2; group 3: 0; group 5: 2.5 - 0
    assert_close(adv, broadcast([-1.0, 0.0, 1.0, 0.0, 0.0, 2.5], MASK6))


def test_grpo_scores_are_the_sum_of_token_rewards_and_padding_is_zero():
    # Scores 1 (= 0.5 + 0.5, process-style rewards) and 3.
    mask = t([[1, 1, 1], [1, 1, 0]])
    rewards = t([[0.5, 0.0, 0.5], [0.0, 3.0, 0.0]])
    adv, _ = ADVANTAGE_ESTIMATORS["grpo"](inputs(rewards, mask, [0, 0]))
    # mean 2, unbiased std sqrt((1 + 1) / 1) = sqrt(2)
    a = 1 / (math.sqrt(2) + EPS)
    assert_close(adv, t([[-a, -a, -a], [a, a, 0.0]]))


def test_rloo_uses_the_mean_of_the_other_samples_as_baseline():
    adv, returns = ADVANTAGE_ESTIMATORS["rloo"](inputs(outcome(SCORES6, MASK6), MASK6, GROUPS6))
    # group 7: 1 - (2+3)/2 = -1.5, 2 - (1+3)/2 = 0, 3 - (1+2)/2 = 1.5
    #   (= s * 3/2 - mean * 3/2 as verl); group 3: 4 - 4 = 0; group of one: 0
    expected = broadcast([-1.5, 0.0, 1.5, 0.0, 0.0, 0.0], MASK6)
    assert_close(adv, expected)
    assert_close(returns, expected)


def test_gae_discounts_td_errors_and_whitens_over_valid_tokens():
    # gamma = lam = 0.5. Row 0: r = [0, 0, 1], V = [.5, .5, .5], all valid.
    #   t2: delta = 1 - .5 = .5                  A2 = .5
    #   t1: delta = 0 + .5*.5 - .5 = -.25        A1 = -.25 + .25*.5 = -.125
    #   t0: delta = -.25                         A0 = -.25 + .25*(-.125) = -.28125
    #   returns = A + V = [.21875, .375, 1.0]
    # Row 1: r = [0, 2, 0], V = [1, 1, 9 (pad)], mask [1, 1, 0].
    #   t2 masked: carries next V = 0 and A = 0 (the pad value 9 is never read)
    #   t1: delta = 2 + 0 - 1 = 1                A1 = 1
    #   t0: delta = 0 + .5*1 - 1 = -.5           A0 = -.5 + .25*1 = -.25
    #   returns = [.75, 2.0, 0 (masked)]
    rewards = t([[0, 0, 1], [0, 2, 0]])
    values = t([[0.5, 0.5, 0.5], [1, 1, 9]])
    mask = t([[1, 1, 1], [1, 1, 0]])
    adv, returns = ADVANTAGE_ESTIMATORS["gae"](
        inputs(rewards, mask, [0, 0], values=values, gamma=0.5, lam=0.5)
    )
    assert_close(returns, t([[0.21875, 0.375, 1.0], [0.75, 2.0, 0.0]]))
    # Whitening over [-.28125, -.125, .5, -.25, 1]: mean .16875,
    # deviations [-.45, -.29375, .33125, -.41875, .83125], sum of squares 1.26484375,
    # unbiased var 1.26484375 / 4 = .3162109375.
    std = math.sqrt(0.3162109375 + 1e-8)
    expected = t([[-0.45, -0.29375, 0.33125], [-0.41875, 0.83125, 0.0]]) / std
    assert_close(adv, expected)


def test_gae_passes_values_through_masked_positions_inside_a_response():
    # r = [0, 0, 1], V = [.5, 7 (masked), .5], mask [1, 0, 1], gamma = lam = .5
    #   t2: A2 = 1 - .5 = .5; t1 masked: next V stays .5, A stays .5
    #   t0: delta = 0 + .5*.5 - .5 = -.25, A0 = -.25 + .25*.5 = -.125
    #   returns = [-.125 + .5, 0 (masked), .5 + .5]
    mask = t([[1, 0, 1]])
    _, returns = ADVANTAGE_ESTIMATORS["gae"](
        inputs(t([[0, 0, 1]]), mask, [0], values=t([[0.5, 7.0, 0.5]]), gamma=0.5, lam=0.5)
    )
    assert_close(returns, t([[0.375, 0.0, 1.0]]))


def test_gae_without_values_names_the_missing_critic():
    mask = t([[1, 1, 1], [1, 1, 1]])
    with pytest.raises(ValueError, match="needs critic values"):
        compute_advantages("gae", inputs(t([[0, 0, 1], [0, 0, 0]]), mask, [0, 0]))


def test_reinforce_plus_plus_discounts_returns_and_ignores_trailing_padding():
    # gamma = .5. Row 0: r = [0, 0, 1] -> returns [.25, .5, 1].
    # Row 1: r = [0, 2, 5 (pad)], mask [1, 1, 0]: the padded token is skipped, so
    #   returns = [1, 2, masked] and the 5 does not leak backwards.
    rewards = t([[0, 0, 1], [0, 2, 5]])
    mask = t([[1, 1, 1], [1, 1, 0]])
    adv, returns = ADVANTAGE_ESTIMATORS["reinforce_plus_plus"](
        inputs(rewards, mask, [0, 1], gamma=0.5)
    )
    assert_close(returns, t([[0.25, 0.5, 1.0], [1.0, 2.0, 0.0]]))
    # Whitening [.25, .5, 1, 1, 2]: mean .95, deviations [-.7, -.45, .05, .05, 1.05],
    # sum of squares 1.8, unbiased var .45.
    std = math.sqrt(0.45 + 1e-8)
    assert_close(adv, t([[-0.7, -0.45, 0.05], [0.05, 1.05, 0.0]]) / std)


def test_reinforce_plus_plus_baseline_subtracts_the_group_mean_then_whitens_the_batch():
    # Groups [0, 0, 1], scores [1, 3, 5], lengths 3, 2, 1.
    # Centred: [1 - 2, 3 - 2, 5 - 0 (a group of one has mean 0)] = [-1, 1, 5]
    # Valid tokens: -1 -1 -1 | 1 1 | 5 -> mean 4/6 = 2/3
    # deviations: -5/3 (x3), 1/3 (x2), 13/3; sum of squares (75 + 2 + 169) / 9 = 246/9
    # unbiased var = 246 / 45
    mask = t([[1, 1, 1], [1, 1, 0], [1, 0, 0]])
    adv, returns = ADVANTAGE_ESTIMATORS["reinforce_plus_plus_baseline"](
        inputs(outcome([1.0, 3.0, 5.0], mask), mask, [0, 0, 1])
    )
    std = math.sqrt(246 / 45 + 1e-8)
    expected = t([[-5 / 3, -5 / 3, -5 / 3], [1 / 3, 1 / 3, 0.0], [13 / 3, 0.0, 0.0]]) / std
    assert_close(adv, expected)
    assert_close(returns, expected)


@pytest.mark.parametrize("name", get_args(AdvantageEstimator))
def test_every_estimator_zeroes_advantages_and_returns_on_padding(name: AdvantageEstimator):
    mask = t([[1, 1, 0], [1, 0, 0], [1, 1, 1], [1, 1, 0]])
    rewards = outcome([1.0, 0.0, 2.0, 0.5], mask)
    values = t([[0.1, 0.2, 3.0], [0.3, 4.0, 4.0], [0.1, 0.1, 0.1], [0.2, 0.2, 5.0]])
    adv, returns = compute_advantages(name, inputs(rewards, mask, [0, 0, 1, 1], values=values))
    assert adv.shape == returns.shape == (4, 3)
    assert torch.all(adv[mask == 0] == 0)
    assert torch.all(returns[mask == 0] == 0)
    if name != "grpo_passk":  # pass@k trains only the best response of each group
        assert torch.all(adv[mask == 1] != 0)


def test_compute_advantages_rejects_an_unknown_estimator_by_name():
    mask = t([[1, 1, 1]])
    with pytest.raises(ValueError, match=r"'ppo_magic'.*allowed"):
        compute_advantages("ppo_magic", inputs(t([[0, 0, 1]]), mask, [0]))  # type: ignore[arg-type]


def test_advantage_inputs_reject_mismatched_shapes():
    with pytest.raises(ValueError, match="response_mask shape"):
        inputs(t([[0, 0, 1]]), t([[1, 1]]), [0])
    with pytest.raises(ValueError, match="group_index"):
        inputs(t([[0, 0, 1]]), t([[1, 1, 1]]), [0, 1])

"""Loss aggregation, policy losses, value loss and entropy against hand arithmetic."""

from __future__ import annotations

import math
from typing import Any, get_args

import pytest
import torch
from torch.testing import assert_close

from trainer.algorithms import (
    POLICY_LOSSES,
    PolicyLossInputs,
    aggregate_loss,
    entropy_from_logits,
    value_loss,
)
from trainer.algorithms.aggregation import LOSS_AGGREGATIONS
from trainer.config.schema import LossAggMode, PolicyLoss


def t(rows: list[Any]) -> torch.Tensor:
    return torch.tensor(rows, dtype=torch.float32)


def scalar(x: float) -> torch.Tensor:
    return torch.tensor(x, dtype=torch.float32)


# Two sequences of lengths 3 and 2; the padded 100 must never count.
LOSSES = t([[1, 2, 3], [4, 5, 100]])
MASK = t([[1, 1, 1], [1, 1, 0]])


@pytest.mark.parametrize(
    ("mode", "norm_constant", "expected"),
    [
        ("token-mean", None, (1 + 2 + 3 + 4 + 5) / 5),  # 3.0
        ("seq-mean-token-sum", None, (6 + 9) / 2),  # 7.5
        ("seq-mean-token-mean", None, (6 / 3 + 9 / 2) / 2),  # 3.25
        ("seq-mean-token-sum-norm", 4.0, (6 / 4 + 9 / 4) / 2),  # 1.875
        ("seq-mean-token-sum-norm", None, (6 / 3 + 9 / 3) / 2),  # default constant = T = 3
    ],
)
def test_each_aggregation_mode_matches_its_definition(
    mode: LossAggMode, norm_constant: float | None, expected: float
):
    assert_close(aggregate_loss(LOSSES, MASK, mode, norm_constant), scalar(expected))


def test_seq_mean_token_mean_leaves_an_empty_sequence_out_of_the_mean():
    # As verl 0.9.1: the empty row neither adds to the loss nor counts in the divisor.
    loss = aggregate_loss(
        t([[1, 2, 3], [7, 7, 7]]), t([[1, 1, 1], [0, 0, 0]]), "seq-mean-token-mean"
    )
    assert_close(loss, scalar(2.0))


def test_a_batch_with_no_response_token_aggregates_to_zero():
    for mode in get_args(LossAggMode):
        loss = aggregate_loss(t([[7, 7]]), t([[0, 0]]), mode, 2.0)
        assert_close(loss, scalar(0.0))


@pytest.mark.parametrize("mode", get_args(LossAggMode))
def test_nan_in_padding_does_not_reach_the_aggregate(mode: LossAggMode):
    losses = t([[1, 2, float("nan")], [4, 5, float("inf")]])
    mask = t([[1, 1, 0], [1, 1, 0]])
    assert torch.isfinite(aggregate_loss(losses, mask, mode, 3.0))


def test_registry_holds_exactly_the_configurable_policy_losses():
    assert set(POLICY_LOSSES) == set(get_args(PolicyLoss))


def test_registry_holds_exactly_the_configurable_aggregation_modes():
    assert set(LOSS_AGGREGATIONS) == set(get_args(LossAggMode))


def test_an_unknown_aggregation_mode_names_the_allowed_ones():
    with pytest.raises(ValueError, match="allowed: token-mean"):
        aggregate_loss(t([[1.0]]), t([[1.0]]), "sum")  # type: ignore[arg-type]


def policy_inputs(
    ratios: list[list[float]],
    advantages: list[list[float]],
    mask: torch.Tensor,
    *,
    clip_high: float = 0.28,
    mode: LossAggMode = "token-mean",
) -> PolicyLossInputs:
    """old log-probs are 0, so the token ratio is exp(logp) = the given ratio."""
    logprobs = torch.log(t(ratios)).requires_grad_(True)
    return PolicyLossInputs(
        logprobs=logprobs,
        old_logprobs=torch.zeros_like(logprobs),
        advantages=t(advantages),
        response_mask=mask,
        clip_ratio_low=0.2,
        clip_ratio_high=clip_high,
        clip_ratio_c=3.0,
        loss_agg_mode=mode,
        norm_constant=None,
    )


# Row 0 has A = +1, row 1 has A = -1; the last column of each row is padding with an
# extreme ratio that would dominate every statistic if it counted.
PPO_RATIOS = [[1.5, 1.25, 0.5, 50.0], [0.7, 1.5, 5.0, 50.0]]
PPO_ADV = [[1.0, 1.0, 1.0, 1.0], [-1.0, -1.0, -1.0, -1.0]]
PPO_MASK = t([[1, 1, 1, 0], [1, 1, 1, 0]])


def test_ppo_clips_low_and_high_separately_and_dual_clips_negative_advantages():
    # eps_low = .2, eps_high = .28, c = 3; loss = max(-A r, -A clip(r, .8, 1.28)):
    #   A=+1, r=1.5 : max(-1.5, -1.28) = -1.28   clipped
    #   A=+1, r=1.25: max(-1.25, -1.25) = -1.25
    #   A=+1, r=0.5 : max(-0.5, -0.8) = -0.5     (pessimistic: unclipped wins)
    #   A=-1, r=0.7 : max(0.7, 0.8) = 0.8        clipped
    #   A=-1, r=1.5 : max(1.5, 1.28) = 1.5
    #   A=-1, r=5.0 : max(5.0, 1.28) = 5.0 -> dual clip min(-A c = 3, 5) = 3
    out = POLICY_LOSSES["ppo"](policy_inputs(PPO_RATIOS, PPO_ADV, PPO_MASK))
    assert_close(out.loss, scalar((-1.28 - 1.25 - 0.5 + 0.8 + 1.5 + 3.0) / 6))
    assert_close(out.clipfrac, scalar(2 / 6))
    assert_close(out.clipfrac_lower, scalar(1 / 6))
    # ppo_kl = mean(old - new) = -mean(log r) over the six valid tokens
    log_sum = sum(math.log(r) for r in (1.5, 1.25, 0.5, 0.7, 1.5, 5.0))
    assert_close(out.ppo_kl, scalar(-log_sum / 6))
    assert not out.clipfrac.requires_grad
    assert not out.ppo_kl.requires_grad


def test_ppo_clip_higher_raises_only_the_upper_bound():
    ratios, adv, mask = [[1.5, 0.7]], [[1.0, -1.0]], t([[1, 1]])
    symmetric = POLICY_LOSSES["ppo"](policy_inputs(ratios, adv, mask, clip_high=0.2))
    higher = POLICY_LOSSES["ppo"](policy_inputs(ratios, adv, mask, clip_high=0.28))
    # r = 1.5, A = +1 is capped at 1.2 vs 1.28; r = .7, A = -1 is floored at .8 in both.
    assert_close(symmetric.loss, scalar((-1.2 + 0.8) / 2))
    assert_close(higher.loss, scalar((-1.28 + 0.8) / 2))


def test_ppo_gradient_flows_through_unclipped_tokens_only():
    inputs = policy_inputs(PPO_RATIOS, PPO_ADV, PPO_MASK)
    POLICY_LOSSES["ppo"](inputs).loss.backward()
    # d/dlogp of (-A r) / 6 is -A r / 6 where the unclipped term is active; clipped,
    # dual-clipped and padded tokens get no gradient.
    expected = t([[0.0, -1.25 / 6, -0.5 / 6, 0.0], [0.0, 1.5 / 6, 0.0, 0.0]])
    assert inputs.logprobs.grad is not None
    assert_close(inputs.logprobs.grad, expected)


def test_ppo_rejects_a_dual_clip_bound_of_at_most_one():
    inputs = policy_inputs([[1.0]], [[1.0]], t([[1]]))
    bad = PolicyLossInputs(**{**inputs.__dict__, "clip_ratio_c": 1.0})
    with pytest.raises(ValueError, match="clip_ratio_c must be > 1"):
        POLICY_LOSSES["ppo"](bad)


def gspo_inputs(diffs: list[list[float]], mask: torch.Tensor) -> PolicyLossInputs:
    logprobs = (t(diffs) - 1.0).requires_grad_(True)
    return PolicyLossInputs(
        logprobs=logprobs,
        old_logprobs=torch.full_like(logprobs, -1.0),
        advantages=torch.ones_like(logprobs),
        response_mask=mask,
        clip_ratio_low=0.2,
        clip_ratio_high=0.28,
        clip_ratio_c=3.0,
        loss_agg_mode="seq-mean-token-mean",
        norm_constant=None,
    )


def test_gspo_ratio_is_one_when_the_policy_has_not_moved():
    mask = t([[1, 1, 1], [1, 1, 0]])
    inputs = gspo_inputs([[0, 0, 0], [0, 0, 0]], mask)
    out = POLICY_LOSSES["gspo"](inputs)
    assert_close(out.loss, scalar(-1.0))  # -A * 1 for every token, A = 1
    assert_close(out.clipfrac, scalar(0.0))
    assert_close(out.ppo_kl, scalar(0.0))
    out.loss.backward()
    # d/dlogp_t = -A * s_i / (L_i * B): row 0: -1 / (3 * 2), row 1: -1 / (2 * 2), pad 0
    assert inputs.logprobs.grad is not None
    assert_close(inputs.logprobs.grad, t([[-1 / 6, -1 / 6, -1 / 6], [-1 / 4, -1 / 4, 0.0]]))


def test_gspo_uses_one_length_normalised_ratio_per_sequence():
    # Row 0: logp - old = [.1, .2, .3] -> s = exp(.2) = 1.2214, inside [.8, 1.28]
    # Row 1: [.5, .7, 9 (pad)] -> s = exp(.6) = 1.8221 (not exp((.5+.7+9)/3)),
    #   clipped to 1.28 for A = +1 on both valid tokens.
    mask = t([[1, 1, 1], [1, 1, 0]])
    out = POLICY_LOSSES["gspo"](gspo_inputs([[0.1, 0.2, 0.3], [0.5, 0.7, 9.0]], mask))
    assert_close(out.loss, scalar((-math.exp(0.2) - 1.28) / 2))
    assert_close(out.clipfrac, scalar(2 / 5))
    assert_close(out.clipfrac_lower, scalar(0.0))
    assert_close(out.ppo_kl, scalar(-(0.1 + 0.2 + 0.3 + 0.5 + 0.7) / 5))


def test_policy_loss_inputs_reject_mismatched_shapes():
    with pytest.raises(ValueError, match="advantages shape"):
        PolicyLossInputs(
            logprobs=torch.zeros(2, 3),
            old_logprobs=torch.zeros(2, 3),
            advantages=torch.zeros(2, 4),
            response_mask=torch.ones(2, 3),
            clip_ratio_low=0.2,
            clip_ratio_high=0.2,
            clip_ratio_c=3.0,
            loss_agg_mode="token-mean",
            norm_constant=None,
        )


def test_value_loss_takes_the_larger_of_clipped_and_unclipped_errors():
    # cliprange .5; third column is padding with a huge error.
    #   t0: V=1, V_old=.8, R=2: clip(1, .3, 1.3) = 1 -> both errors 1 -> 1
    #   t1: V=2, V_old=1,  R=3: clip(2, .5, 1.5) = 1.5 -> max((2-3)^2, (1.5-3)^2) = 2.25 clipped
    values = t([[1.0, 2.0, 100.0]]).requires_grad_(True)
    loss, clipfrac = value_loss(
        values, t([[0.8, 1.0, 0.0]]), t([[2.0, 3.0, 0.0]]), t([[1, 1, 0]]), 0.5, "token-mean"
    )
    assert_close(loss, scalar(0.5 * (1 + 2.25) / 2))
    assert_close(clipfrac, scalar(0.5))
    loss.backward()
    # d/dV of .5 * (V - R)^2 / 2 = (V - R) / 2 at t0; the clipped t1 and the pad get 0
    assert values.grad is not None
    assert_close(values.grad, t([[-0.5, 0.0, 0.0]]))


def test_entropy_from_logits_matches_the_closed_form():
    # uniform over 4: ln 4; probs [1/4, 3/4, 0, 0] via logits [0, ln 3, -1e4, -1e4]:
    #   H = ln 4 - 3/4 ln 3 = -(1/4 ln 1/4 + 3/4 ln 3/4), where a naive sum of p log p
    #   would hit 0 * log 0 = nan; two large equal logits: ln 2
    logits = torch.tensor(
        [
            [[0.0, 0.0, 0.0, 0.0], [0.0, math.log(3.0), -1e4, -1e4]],
            [[50.0, 50.0, -1e4, -1e4], [5.0, 5.0, 5.0, 5.0]],
        ]
    )  # (B=2, T=2, V=4)
    expected = t([[math.log(4), math.log(4) - 0.75 * math.log(3)], [math.log(2), math.log(4)]])
    assert_close(entropy_from_logits(logits), expected)

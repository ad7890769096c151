"""Rollout correction on perturbed log-probs, PF-PPO's weights, clip_cov's random pick and
ReMax's greedy baseline, by hand: the pieces the training step adds for these algorithms."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest
import torch

from trainer.algorithms.bypass_loss import bypass_mode_loss
from trainer.algorithms.clipped_losses import ppo_loss
from trainer.algorithms.pf_ppo import pf_ppo_rows, pf_ppo_weights
from trainer.algorithms.policy_loss import POLICY_LOSSES, zero_advantage_rows_matter
from trainer.algorithms.policy_loss_inputs import PolicyLossInputs
from trainer.algorithms.rollout_correction import correct, importance_weights, rejection_mask
from trainer.config.algorithm_section import PolicyLossOptions, RolloutCorrectionConfig
from trainer.config.sampling import SamplingParams
from trainer.rewards.contract import RewardRequest, RewardResult
from trainer.rollout.collect import PromptItem, Sample
from trainer.rollout.engine import Completion
from trainer.training.algorithm_inputs import greedy_baselines


def t(rows: Any) -> torch.Tensor:
    return torch.tensor(rows, dtype=torch.float32)


LN = math.log
MASK = t([[1, 1, 1], [1, 1, 0]])
# log pi_old - log pi_rollout: ratios 3, 0.5, 1 | 1.5, 1.2, (padding)
LOG_RATIO = t([[LN(3), LN(0.5), 0.0], [LN(1.5), LN(1.2), 9.0]])


def test_token_weights_are_the_ratios_truncated_at_the_threshold_and_zero_on_padding():
    weights = importance_weights(LOG_RATIO, MASK, "token", "2.0", False)
    torch.testing.assert_close(weights, t([[2.0, 0.5, 1.0], [1.5, 1.2, 0.0]]))


def test_sequence_weights_are_the_product_of_the_ratios_over_the_sequence():
    weights = importance_weights(LOG_RATIO, MASK, "sequence", "5.0", False)
    torch.testing.assert_close(weights, t([[1.5, 1.5, 1.5], [1.8, 1.8, 0.0]]))


def test_a_band_zeroes_the_weights_outside_it_instead_of_truncating():
    weights = importance_weights(LOG_RATIO, MASK, "token", "0.8_2.0", False)
    torch.testing.assert_close(weights, t([[0.0, 0.0, 1.0], [1.5, 1.2, 0.0]]))


def test_batch_normalised_token_weights_average_one_over_the_response_tokens():
    weights = importance_weights(LOG_RATIO, MASK, "token", "2.0", True)
    assert float((weights * MASK).sum() / MASK.sum()) == pytest.approx(1.0)


def test_token_k1_rejection_drops_the_tokens_whose_ratio_leaves_the_band():
    kept = rejection_mask(LOG_RATIO, MASK, "token_k1", "2.0")  # band [0.5, 2]
    torch.testing.assert_close(kept, t([[0, 1, 1], [1, 1, 0]]))


def test_sequence_rejection_drops_the_whole_sequence():
    # k3 of ratio 3 is 3 - 1 - ln 3 = 0.90: over 0.5, so row 0 goes; row 1's max is 0.0945.
    kept = rejection_mask(LOG_RATIO, MASK, "seq_max_k3", "0.5")
    torch.testing.assert_close(kept, t([[0, 0, 0], [1, 1, 0]]))


def test_equal_logprobs_leave_weights_at_one_and_every_token_in():
    logprobs = -torch.rand(2, 3)
    cfg = RolloutCorrectionConfig(
        rollout_is="token", rollout_rs="token_k2", rollout_rs_threshold=1e-6
    )
    fix = correct(logprobs, logprobs.clone(), MASK, cfg)
    assert fix.weights is not None
    torch.testing.assert_close(fix.weights, MASK)
    torch.testing.assert_close(fix.response_mask, MASK)
    assert fix.metrics["rollout_corr/kl"] == 0.0


def test_bypass_ppo_clip_is_ppo_on_the_tokens_the_rejection_keeps():
    logprobs = t([[-1.0, -2.0, -0.5], [-1.5, -0.2, -3.0]]).requires_grad_(True)
    rollout = logprobs.detach() - LOG_RATIO * MASK  # the current policy is the old one here
    base: dict[str, Any] = {
        "logprobs": logprobs,
        "old_logprobs": rollout,
        "advantages": t([[1.0, 1.0, 1.0], [-1.0, -1.0, 0.0]]),
        "response_mask": MASK,
        "clip_ratio_low": 0.2,
        "clip_ratio_high": 0.2,
        "clip_ratio_c": 3.0,
        "loss_agg_mode": "token-mean",
        "norm_constant": None,
    }
    cfg = RolloutCorrectionConfig(
        bypass_mode=True, rollout_rs="token_k1", rollout_rs_threshold="2.0"
    )
    out = bypass_mode_loss(PolicyLossInputs(**base, rollout_correction=cfg))
    kept = t([[0, 1, 1], [1, 1, 0]])
    expected = ppo_loss(PolicyLossInputs(**{**base, "response_mask": kept}))
    torch.testing.assert_close(out.loss, expected.loss)
    assert out.metrics["rollout_corr/rollout_rs_masked_fraction"] == pytest.approx(0.2)


def test_bypass_mode_without_its_config_names_the_key():
    x = t([[-1.0]])
    inputs = PolicyLossInputs(x, x, x, t([[1.0]]), 0.2, 0.2, 3.0, "token-mean", None)
    with pytest.raises(ValueError, match="rollout_correction"):
        bypass_mode_loss(inputs)


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("pow", [1.0, 0.25, 4.0, 0.0]),
        ("max_min", [0.0, 1.0, 1.0, 0.0]),
        ("max_random", [0.1, 0.1, 0.4, 0.1]),
    ],
)
def test_pf_ppo_weights_follow_the_reweight_method(method, expected):
    weights = pf_ppo_weights(t([1.0, -0.5, 2.0, 0.0]), method, 2.0)
    torch.testing.assert_close(weights, t(expected) + 1e-8)


def test_pf_ppo_draws_as_many_rows_as_the_batch_and_favours_high_scores():
    generator = torch.Generator().manual_seed(0)
    rows = pf_ppo_rows(t([0.0, 0.0, 0.0, 5.0]), "pow", 2.0, generator)
    assert rows.tolist() == [3, 3, 3, 3]


@dataclass
class FakeEngine:
    """Answers each prompt with its own text reversed; records the sampling asked for."""

    calls: list[SamplingParams] = field(default_factory=list)

    def generate(self, prompts: list[list[int]], sampling: SamplingParams) -> list[Completion]:
        self.calls.append(sampling)
        return [
            Completion(i, [1], [0.0], text=f"answer{p[0]}", finish_reason="eos")
            for i, p in enumerate(prompts)
        ]


class FakeScorer:
    def score_batch(self, requests: list[RewardRequest]) -> list[RewardResult]:
        return [RewardResult(score=float(r.solution_str.removeprefix("answer"))) for r in requests]

    def close(self) -> None:
        pass


def _sample(prompt: PromptItem, group: int) -> Sample:
    completion = Completion(0, [1], [0.0], text="x", finish_reason="eos")
    return Sample(prompt, group, completion, RewardResult(score=0.0), score=0.0)


def test_remax_baseline_is_the_greedy_responses_reward_for_each_samples_prompt():
    prompts = [PromptItem(str(i), [i], f"p{i}", "arith", "0") for i in (7, 3)]
    samples = [_sample(prompts[0], 0), _sample(prompts[1], 1), _sample(prompts[0], 0)]
    engine = FakeEngine()
    state = SimpleNamespace(engine=engine, scorer=FakeScorer())
    shaped: list[int] = []
    baselines = greedy_baselines(
        state,
        samples,
        SamplingParams(n=8, temperature=1.0),
        lambda greedy: shaped.append(len(greedy)),
    )
    torch.testing.assert_close(baselines, t([7.0, 3.0, 7.0]))
    assert [(c.n, c.temperature) for c in engine.calls] == [(1, 0.0)]  # one greedy each
    assert shaped == [2]  # shaped like the samples (overlong), once per prompt


def test_clip_cov_cuts_the_gradient_of_exactly_its_share_of_tokens():
    # 40 valid tokens, no ratio clipped, every covariance inside (lb, ub): 10% is 4 tokens.
    torch.manual_seed(0)
    logprobs = (-torch.rand(4, 10) - 0.1).requires_grad_(True)
    mask = torch.ones(4, 10)
    inputs = PolicyLossInputs(
        logprobs=logprobs,
        old_logprobs=logprobs.detach(),
        advantages=torch.randn(4, 10),
        response_mask=mask,
        clip_ratio_low=0.2,
        clip_ratio_high=0.2,
        clip_ratio_c=3.0,
        loss_agg_mode="token-mean",
        norm_constant=None,
        options=PolicyLossOptions(clip_cov_ratio=0.1, clip_cov_lb=-100.0, clip_cov_ub=100.0),
        generator=torch.Generator().manual_seed(1),
    )
    out = POLICY_LOSSES["clip_cov"](inputs)
    out.loss.backward()
    assert logprobs.grad is not None
    assert int((logprobs.grad == 0).sum()) == 4
    assert float(out.clipfrac) == pytest.approx(0.1)


@pytest.mark.parametrize(("loss", "matters"), [("dro", True), ("kl_cov", True), ("cispo", False)])
def test_rows_without_advantage_are_kept_for_the_losses_they_still_move(loss, matters):
    assert zero_advantage_rows_matter(loss) is matters

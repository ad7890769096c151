"""Policy losses on the log-prob itself (REINFORCE-style) rather than on the ratio.

Each follows verl 0.9.1's compute_policy_loss_<name>; parity with verl's recorded outputs
is tested (tests/trainer/test_algorithms_verl_parity.py).
"""

from __future__ import annotations

import torch
from torch import Tensor

from trainer.algorithms.aggregation import aggregate_loss
from trainer.algorithms.policy_loss_inputs import (
    LOG_RATIO_LIMIT,
    PolicyLossInputs,
    PolicyLossOutput,
    weighted,
)
from trainer.algorithms.stats import masked_mean


def _aggregate(
    token_losses: Tensor, inputs: PolicyLossInputs, mask: Tensor | None = None
) -> Tensor:
    return aggregate_loss(
        weighted(token_losses, inputs),
        inputs.response_mask if mask is None else mask,
        inputs.loss_agg_mode,
        inputs.norm_constant,
    )


def _ppo_kl(inputs: PolicyLossInputs) -> Tensor:
    with torch.no_grad():
        return masked_mean(inputs.old_logprobs - inputs.logprobs, inputs.response_mask)


def gpg_loss(inputs: PolicyLossInputs) -> PolicyLossOutput:
    """GPG (arXiv 2504.02546): loss_t = -A_t log pi_t, no ratio and no clip. verl reports
    no metrics for it; ppo_kl is reported here as for every loss, clipfracs are 0."""
    loss = _aggregate(-inputs.logprobs * inputs.advantages, inputs)
    ppo_kl = _ppo_kl(inputs)
    return PolicyLossOutput(loss, torch.zeros_like(ppo_kl), torch.zeros_like(ppo_kl), ppo_kl)


def dro_loss(inputs: PolicyLossInputs) -> PolicyLossOutput:
    """DRO: loss_t = -(A_t log pi_t - beta/2 (log pi_t - log pi_old)^2)."""
    beta = inputs.options.dro_beta
    if beta is None or beta <= 0:
        raise ValueError(
            f"actor.policy_loss=dro needs actor.policy_loss_options.dro_beta > 0, got {beta}."
        )
    log_ratio = inputs.logprobs - inputs.old_logprobs  # (B, T)
    token_losses = -(inputs.logprobs * inputs.advantages - 0.5 * beta * log_ratio.square())
    loss = _aggregate(token_losses, inputs)
    ppo_kl = _ppo_kl(inputs)
    return PolicyLossOutput(loss, torch.zeros_like(ppo_kl), torch.zeros_like(ppo_kl), ppo_kl)


def _dppo(inputs: PolicyLossInputs, valid: Tensor) -> PolicyLossOutput:
    """DPPO (arXiv 2602.04879): -A * sg[min(r, c)] * log pi on the tokens whose divergence
    from the old policy stays inside the bound (`valid`); c is clip_ratio_c."""
    mask, adv = inputs.response_mask, inputs.advantages
    log_ratio = (inputs.logprobs - inputs.old_logprobs).clamp(-LOG_RATIO_LIMIT, LOG_RATIO_LIMIT)
    ratio = torch.exp(log_ratio)  # (B, T)
    truncated = ratio.clamp(max=inputs.clip_ratio_c).detach()  # (B, T)
    keep = valid.detach().to(ratio.dtype)  # (B, T)
    loss = _aggregate(-adv * truncated * inputs.logprobs * keep, inputs)
    with torch.no_grad():
        clipfrac = masked_mean(1.0 - keep, mask)
        clipfrac_lower = masked_mean((ratio > inputs.clip_ratio_c).to(ratio.dtype) * keep, mask)
        ppo_kl = masked_mean(-log_ratio, mask)
    return PolicyLossOutput(loss, clipfrac, clipfrac_lower, ppo_kl)


def dppo_tv_loss(inputs: PolicyLossInputs) -> PolicyLossOutput:
    """DPPO-Binary-TV: a token is kept while p - p_old <= clip_ratio_high (A > 0) or
    p - p_old >= -clip_ratio_low (A <= 0); the clip ratios are TV bounds here."""
    gap = inputs.logprobs.exp() - inputs.old_logprobs.exp()  # (B, T)
    valid = torch.where(
        inputs.advantages > 0, gap <= inputs.clip_ratio_high, gap >= -inputs.clip_ratio_low
    )
    return _dppo(inputs, valid)


def dppo_kl_loss(inputs: PolicyLossInputs) -> PolicyLossOutput:
    """DPPO-Binary-KL: the bound is on the KL between the Bernoulli(p_old) and
    Bernoulli(p) of the sampled token; moves towards a lower loss are always kept."""
    prob, old_prob = inputs.logprobs.exp(), inputs.old_logprobs.exp()
    binary_kl = old_prob * (inputs.old_logprobs - inputs.logprobs) + (1 - old_prob) * torch.log(
        (1.0 - old_prob + 1e-8) / (1.0 - prob + 1e-8)
    )  # (B, T)
    valid = torch.where(
        inputs.advantages > 0,
        (binary_kl <= inputs.clip_ratio_high) | (prob <= old_prob),
        (binary_kl <= inputs.clip_ratio_low) | (prob >= old_prob),
    )
    return _dppo(inputs, valid)

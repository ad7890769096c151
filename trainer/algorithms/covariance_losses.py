"""Clip-Cov and KL-Cov (arXiv 2505.22617): PPO whose special treatment goes to the tokens
where the advantage and the log-prob covary most, the ones that collapse entropy.

Both follow verl 0.9.1's compute_policy_loss_clip_cov / _kl_cov.
"""

from __future__ import annotations

import torch

from trainer.algorithms.aggregation import aggregate_loss
from trainer.algorithms.policy_loss_inputs import PolicyLossInputs, PolicyLossOutput, weighted
from trainer.algorithms.stats import masked_mean


def clip_cov_loss(inputs: PolicyLossInputs) -> PolicyLossOutput:
    """Clipped PPO (no dual clip), and among the tokens the clip leaves alone whose
    covariance lies in (clip_cov_lb, clip_cov_ub), a random clip_cov_ratio share (at
    least one) loses its gradient. The pick draws from `inputs.generator`."""
    opts, mask, adv = inputs.options, inputs.response_mask, inputs.advantages
    log_ratio = inputs.logprobs - inputs.old_logprobs  # (B, T), not clamped (verl)
    ratio = torch.exp(log_ratio)
    unclipped = -adv * ratio  # (B, T)
    clipped = -adv * ratio.clamp(1 - inputs.clip_ratio_low, 1 + inputs.clip_ratio_high)
    with torch.no_grad():
        valid = mask > 0  # (B, T)
        cov = (adv - masked_mean(adv, mask)) * (
            inputs.logprobs.detach() - masked_mean(inputs.logprobs.detach(), mask)
        )  # (B, T)
        cov = cov.masked_fill(~valid | (clipped > unclipped), -torch.inf)
        budget = max(int(opts.clip_cov_ratio * float(mask.sum())), 1)
        candidates = torch.nonzero((cov < opts.clip_cov_ub) & (cov > opts.clip_cov_lb) & valid)
        order = torch.randperm(len(candidates), generator=inputs.generator)
        picked = candidates[order[:budget]]  # (k, 2)
        keep = torch.ones_like(adv)
        keep[picked[:, 0], picked[:, 1]] = 0
    token_losses = weighted(torch.maximum(unclipped, clipped) * keep, inputs)
    loss = aggregate_loss(token_losses, mask, inputs.loss_agg_mode, inputs.norm_constant)
    with torch.no_grad():
        clipfrac = masked_mean((keep == 0).to(ratio.dtype), mask)
        ppo_kl = masked_mean(-log_ratio, mask)
    return PolicyLossOutput(loss, clipfrac, torch.zeros_like(clipfrac), ppo_kl)


def kl_cov_loss(inputs: PolicyLossInputs) -> PolicyLossOutput:
    """-A r on every token (no clip), plus ppo_kl_coef * |log r| on the kl_cov_ratio
    share (at least one) of valid tokens with the highest covariance. Its ppo_kl metric is
    the mean |log r| (verl)."""
    opts, mask, adv = inputs.options, inputs.response_mask, inputs.advantages
    log_ratio = inputs.logprobs - inputs.old_logprobs  # (B, T)
    ratio = torch.exp(log_ratio)
    token_losses = -adv * ratio  # (B, T)
    with torch.no_grad():
        valid = torch.nonzero(mask.reshape(-1) > 0).squeeze(-1)  # (N,) flat positions
        flat_adv = adv.detach().reshape(-1)[valid]
        flat_logp = inputs.logprobs.detach().reshape(-1)[valid]
        penalised = torch.zeros(adv.numel(), dtype=torch.bool, device=adv.device)
        if valid.numel():
            cov = (flat_adv - flat_adv.mean()) * (flat_logp - flat_logp.mean())  # (N,)
            count = max(1, int(valid.numel() * opts.kl_cov_ratio))
            penalised[valid[torch.topk(cov, count, largest=True).indices]] = True
    penalty = opts.ppo_kl_coef * log_ratio.abs()  # (B, T)
    token_losses = torch.where(penalised.reshape(adv.shape), token_losses + penalty, token_losses)
    loss = aggregate_loss(
        weighted(token_losses, inputs), mask, inputs.loss_agg_mode, inputs.norm_constant
    )
    with torch.no_grad():
        abs_kl = masked_mean(log_ratio.abs(), mask)
    zero = torch.zeros_like(abs_kl)
    return PolicyLossOutput(loss, zero, zero, abs_kl)

"""Policy losses built on the importance ratio pi / pi_old, clipped or gated.

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

GSPO_LOG_RATIO_MAX = 10.0  # verl clamps GSPO's combined log-ratio above at 10


def _token_ratio(inputs: PolicyLossInputs) -> tuple[Tensor, Tensor]:
    """(clamped log-ratio, ratio), both (B, T)."""
    log_ratio = (inputs.logprobs - inputs.old_logprobs).clamp(-LOG_RATIO_LIMIT, LOG_RATIO_LIMIT)
    return log_ratio, torch.exp(log_ratio)


def _aggregate(token_losses: Tensor, inputs: PolicyLossInputs) -> Tensor:
    return aggregate_loss(
        weighted(token_losses, inputs),
        inputs.response_mask,
        inputs.loss_agg_mode,
        inputs.norm_constant,
    )


def ppo_loss(inputs: PolicyLossInputs) -> PolicyLossOutput:
    """Token-level clipped surrogate with separate low/high clips and dual clip.

    loss_t = max(-A r, -A clip(r, 1 - eps_low, 1 + eps_high)); where A < 0 it is
    further capped at -A c, so a huge ratio on a bad token cannot dominate.
    """
    if inputs.clip_ratio_c <= 1.0:
        raise ValueError(f"clip_ratio_c must be > 1 for dual-clip PPO, got {inputs.clip_ratio_c}.")
    mask, adv = inputs.response_mask, inputs.advantages
    log_ratio, ratio = _token_ratio(inputs)  # (B, T)
    unclipped = -adv * ratio  # (B, T)
    clipped = -adv * ratio.clamp(1 - inputs.clip_ratio_low, 1 + inputs.clip_ratio_high)  # (B, T)
    clip_loss = torch.maximum(unclipped, clipped)  # (B, T)
    dual_bound = -adv * inputs.clip_ratio_c  # (B, T)
    negative = adv < 0  # (B, T)
    token_losses = torch.where(negative, torch.minimum(dual_bound, clip_loss), clip_loss)
    loss = _aggregate(token_losses, inputs)
    with torch.no_grad():
        clipfrac = masked_mean((clipped > unclipped).to(ratio.dtype), mask)
        clipfrac_lower = masked_mean(((clip_loss > dual_bound) & negative).to(ratio.dtype), mask)
        ppo_kl = masked_mean(-log_ratio, mask)
    return PolicyLossOutput(loss, clipfrac, clipfrac_lower, ppo_kl)


def gspo_loss(inputs: PolicyLossInputs) -> PolicyLossOutput:
    """GSPO (arXiv 2507.18071): one length-normalised ratio per sequence.

    s_i = exp(mean_t (logp - old)) over the valid tokens of sequence i. Each token
    uses sg[s_i] * exp(logp - sg[logp]) (GSPO-token): the value is s_i and the
    gradient is s_i * grad logp_t, which under seq-mean-token-mean equals the
    paper's sequence-level gradient. The log of that is clamped above at 10 (verl). No
    dual clip; `clipfrac_lower` is 0. `loss_agg_mode` applies (recommend seq-mean-token-mean).
    """
    mask, adv, logprobs = inputs.response_mask, inputs.advantages, inputs.logprobs
    log_ratio = logprobs - inputs.old_logprobs  # (B, T)
    seq_log_ratio = masked_mean(log_ratio.detach(), mask, dim=-1)  # (B,)
    combined = logprobs - logprobs.detach() + seq_log_ratio.unsqueeze(-1)  # (B, T)
    ratio = torch.exp(combined.clamp(max=GSPO_LOG_RATIO_MAX))  # (B, T)
    unclipped = -adv * ratio  # (B, T)
    clipped = -adv * ratio.clamp(1 - inputs.clip_ratio_low, 1 + inputs.clip_ratio_high)  # (B, T)
    loss = _aggregate(torch.maximum(unclipped, clipped), inputs)
    with torch.no_grad():
        clipfrac = masked_mean((clipped > unclipped).to(ratio.dtype), mask)
        ppo_kl = masked_mean(-log_ratio, mask)
    return PolicyLossOutput(loss, clipfrac, torch.zeros_like(clipfrac), ppo_kl)


def sapo_loss(inputs: PolicyLossInputs) -> PolicyLossOutput:
    """SAPO (arXiv 2511.20347): a soft gate instead of a hard clip,
    loss_t = -A_t * sigmoid(tau (r_t - 1)) * 4 / tau, tau = tau_pos where A > 0 else tau_neg.

    Always aggregated seq-mean-token-mean, as verl (`sequence_mode` makes the update
    weigh micro-batches by rows to match).
    """
    mask, adv = inputs.response_mask, inputs.advantages
    log_ratio, ratio = _token_ratio(inputs)
    opts = inputs.options
    taus = torch.where(adv > 0, opts.tau_pos, opts.tau_neg).to(adv.dtype)  # (B, T)
    gates = torch.sigmoid(taus * (ratio - 1.0)) * (4.0 / taus)  # (B, T)
    token_losses = weighted(-gates * adv, inputs)
    loss = aggregate_loss(token_losses, mask, "seq-mean-token-mean", inputs.norm_constant)
    with torch.no_grad():
        ppo_kl = masked_mean(-log_ratio, mask)
    zero = torch.zeros_like(ppo_kl)
    return PolicyLossOutput(loss, zero, zero, ppo_kl)


def cispo_loss(inputs: PolicyLossInputs) -> PolicyLossOutput:
    """CISPO (arXiv 2506.13585): loss_t = -sg[clip(r_t)] * A_t * log pi_t. The clipped
    ratio only weighs the token; every token keeps its gradient, clipped or not."""
    mask, adv = inputs.response_mask, inputs.advantages
    log_ratio, ratio = _token_ratio(inputs)
    clipped = ratio.clamp(1 - inputs.clip_ratio_low, 1 + inputs.clip_ratio_high).detach()
    loss = _aggregate(-clipped * adv * inputs.logprobs, inputs)
    with torch.no_grad():
        clipfrac = masked_mean((ratio != clipped).to(ratio.dtype), mask)
        ppo_kl = masked_mean(-log_ratio, mask)
    return PolicyLossOutput(loss, clipfrac, torch.zeros_like(clipfrac), ppo_kl)


def geo_mean_loss(inputs: PolicyLossInputs) -> PolicyLossOutput:
    """GMPO (arXiv 2507.20673): the geometric mean of the token ratios, each clipped in
    log space on the side its advantage sign makes pessimistic, times the sequence's mean
    advantage; the loss is the mean over rows (verl ignores `loss_agg_mode` here, and so do
    we: `sequence_mode`). The log-ratio is not clamped to [-20, 20] (verl)."""
    mask, adv = inputs.response_mask, inputs.advantages
    log_ratio = inputs.logprobs - inputs.old_logprobs  # (B, T)
    sign = torch.sign(adv)  # (B, T)
    log_clamped = log_ratio.clamp(-inputs.clip_ratio_low, inputs.clip_ratio_high)  # (B, T)
    pessimistic = sign * torch.minimum(sign * log_ratio, sign * log_clamped)  # (B, T)
    lengths = mask.sum(dim=-1) + 1e-8  # (B,)
    ratio = torch.exp((pessimistic * mask).sum(dim=-1) / lengths)  # (B,)
    seq_adv = (adv * mask).sum(dim=-1) / lengths  # (B,)
    seq_losses = -seq_adv * ratio  # (B,)
    if inputs.rollout_is_weights is not None:  # their geometric mean over the sequence
        log_w = torch.log(inputs.rollout_is_weights + 1e-10)
        seq_losses = seq_losses * torch.exp((log_w * mask).sum(dim=-1) / lengths)
    loss = seq_losses.mean()
    with torch.no_grad():
        moved = log_ratio != log_clamped  # (B, T)
        clipfrac = masked_mean((moved & (adv > 0)).to(ratio.dtype), mask)
        clipfrac_lower = masked_mean((moved & (adv < 0)).to(ratio.dtype), mask)
        ppo_kl = masked_mean(-log_ratio, mask)
    return PolicyLossOutput(loss, clipfrac, clipfrac_lower, ppo_kl)

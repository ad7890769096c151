"""verl's `bypass_mode` loss: the engine's log-probs stand in for the old policy's (no
old log-prob pass), and the correction happens inside the loss."""

from __future__ import annotations

import dataclasses

import torch

from trainer.algorithms.aggregation import aggregate_loss
from trainer.algorithms.clipped_losses import ppo_loss
from trainer.algorithms.policy_loss_inputs import PolicyLossInputs, PolicyLossOutput
from trainer.algorithms.rollout_correction import correct
from trainer.algorithms.stats import masked_mean


def bypass_mode_loss(inputs: PolicyLossInputs) -> PolicyLossOutput:
    """`old_logprobs` are the engine's. Weights and rejections compare the current policy
    with them; loss_type `ppo_clip` is PPO on the rejected-masked tokens (its ratio already
    is pi / pi_rollout, so no weights: verl), `reinforce` is -w A log pi."""
    cfg = inputs.rollout_correction
    if cfg is None:
        raise ValueError(
            "actor.policy_loss=bypass_mode needs algorithm.rollout_correction "
            "(PolicyLossInputs.rollout_correction is None)."
        )
    fix = correct(inputs.logprobs.detach(), inputs.old_logprobs, inputs.response_mask, cfg)
    if cfg.loss_type == "ppo_clip":
        out = ppo_loss(
            dataclasses.replace(inputs, response_mask=fix.response_mask, rollout_is_weights=None)
        )
    else:
        token_losses = -inputs.advantages * inputs.logprobs
        if fix.weights is not None:
            token_losses = token_losses * fix.weights
        loss = aggregate_loss(
            token_losses, fix.response_mask, inputs.loss_agg_mode, inputs.norm_constant
        )
        with torch.no_grad():
            kl = masked_mean(inputs.old_logprobs - inputs.logprobs, fix.response_mask)
        out = PolicyLossOutput(loss, torch.zeros_like(kl), torch.zeros_like(kl), kl)
    out.metrics.update(fix.metrics)
    return out

"""Policy-gradient losses: one input type, one output type, one closed registry.

`POLICY_LOSSES[cfg.actor.policy_loss](inputs)` is the only call the actor makes. The
registry holds every loss of verl 0.9.1's POLICY_LOSS_REGISTRY under verl's name (`ppo`
is verl's `vanilla`); each follows verl's compute_policy_loss_<name>.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from trainer.algorithms.bypass_loss import bypass_mode_loss
from trainer.algorithms.clipped_losses import (
    cispo_loss,
    geo_mean_loss,
    gspo_loss,
    ppo_loss,
    sapo_loss,
)
from trainer.algorithms.covariance_losses import clip_cov_loss, kl_cov_loss
from trainer.algorithms.gradient_losses import dppo_kl_loss, dppo_tv_loss, dro_loss, gpg_loss
from trainer.algorithms.policy_loss_inputs import (
    LOG_RATIO_LIMIT,
    PolicyLossFn,
    PolicyLossInputs,
    PolicyLossOutput,
)
from trainer.config.schema import LossAggMode, PolicyLoss

__all__ = [
    "LOG_RATIO_LIMIT",
    "POLICY_LOSSES",
    "PolicyLossFn",
    "PolicyLossInputs",
    "PolicyLossOutput",
    "active_policy_loss",
    "effective_loss_agg_mode",
    "gspo_loss",
    "ppo_loss",
    "zero_advantage_rows_matter",
]

POLICY_LOSSES: Mapping[PolicyLoss, PolicyLossFn] = MappingProxyType(
    {
        "ppo": ppo_loss,
        "gspo": gspo_loss,
        "sapo": sapo_loss,
        "gpg": gpg_loss,
        "clip_cov": clip_cov_loss,
        "kl_cov": kl_cov_loss,
        "geo_mean": geo_mean_loss,
        "cispo": cispo_loss,
        "dppo_tv": dppo_tv_loss,
        "dppo_kl": dppo_kl_loss,
        "dro": dro_loss,
        "bypass_mode": bypass_mode_loss,
    }
)

# Losses that average over sequences whatever `loss_agg_mode` says (verl): the update
# weighs their micro-batches by rows so the accumulated gradient stays the batch's.
_SEQUENCE_MEAN: frozenset[str] = frozenset({"sapo", "geo_mean"})


# Losses where a row whose advantages are all 0 still matters: dro's log-ratio penalty has
# a gradient of its own, and clip_cov / kl_cov pick their tokens from statistics over the
# whole micro-batch (leaving rows out would change the pick).
_ZERO_ADVANTAGE_ROWS_MATTER: frozenset[str] = frozenset({"dro", "clip_cov", "kl_cov"})


def zero_advantage_rows_matter(loss: PolicyLoss) -> bool:
    """Whether rows whose every advantage is 0 change the loss's gradient under `loss`."""
    return loss in _ZERO_ADVANTAGE_ROWS_MATTER


def active_policy_loss(configured: PolicyLoss, bypass_mode: bool) -> PolicyLoss:
    """The loss the actor runs: algorithm.rollout_correction.bypass_mode replaces the
    configured one with `bypass_mode`, as verl's apply_bypass_mode does (the config refuses
    a configured loss other than ppo there, so nothing is replaced silently)."""
    return "bypass_mode" if bypass_mode else configured


def effective_loss_agg_mode(loss: PolicyLoss, configured: LossAggMode) -> LossAggMode:
    """The aggregation the loss `loss` actually applies under `configured`."""
    return "seq-mean-token-mean" if loss in _SEQUENCE_MEAN else configured

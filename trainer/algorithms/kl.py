"""KL estimators between the policy and the reference, and the KL-in-reward controller."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

import torch
from torch import Tensor

from trainer.algorithms.stats import masked_mean
from trainer.config.schema import KLControlConfig, KLEstimator

KLFn = Callable[[Tensor, Tensor], Tensor]  # (logprobs (B, T), ref_logprobs (B, T)) -> (B, T)


def _k1(logprobs: Tensor, ref_logprobs: Tensor) -> Tensor:
    return logprobs - ref_logprobs


def _abs(logprobs: Tensor, ref_logprobs: Tensor) -> Tensor:
    return (logprobs - ref_logprobs).abs()


def _k2(logprobs: Tensor, ref_logprobs: Tensor) -> Tensor:
    return 0.5 * (logprobs - ref_logprobs).square()


def _k3(logprobs: Tensor, ref_logprobs: Tensor) -> Tensor:
    """Schulman's unbiased, non-negative estimator: r - log r - 1 with r = p_ref / p."""
    # Clamping the exponent first keeps exp finite (and its gradient non-NaN);
    # the result is clamped to [-10, 10] as verl's low_var_kl.
    log_r = (ref_logprobs - logprobs).clamp(-20.0, 20.0)  # (B, T)
    return (torch.exp(log_r) - log_r - 1).clamp(-10.0, 10.0)


KL_ESTIMATORS: Mapping[KLEstimator, KLFn] = MappingProxyType(
    {"k1": _k1, "abs": _abs, "k2": _k2, "k3": _k3, "low_var_kl": _k3}
)


def kl_penalty(logprobs: Tensor, ref_logprobs: Tensor, estimator: KLEstimator) -> Tensor:
    """Per-token KL estimate (B, T) of the policy from the reference."""
    if estimator not in KL_ESTIMATORS:
        raise ValueError(f"Unknown KL estimator {estimator!r}; allowed: {sorted(KL_ESTIMATORS)}.")
    return KL_ESTIMATORS[estimator](logprobs, ref_logprobs)


def apply_kl_in_reward(
    token_rewards: Tensor,
    old_logprobs: Tensor,
    ref_logprobs: Tensor,
    mask: Tensor,
    beta: float,
    estimator: KLEstimator,
) -> tuple[Tensor, float]:
    """r_t - beta * kl_t on valid tokens (verl's `apply_kl_penalty`).

    Returns the new token rewards (B, T) and the batch KL: the mean over sequences
    of each sequence's token-mean KL, the value the adaptive controller is fed.
    """
    with torch.no_grad():
        fmask = mask.to(token_rewards.dtype)  # (B, T)
        kl = kl_penalty(old_logprobs, ref_logprobs, estimator) * fmask  # (B, T)
        rewards = token_rewards - beta * kl  # (B, T)
        mean_kl = float(masked_mean(kl, fmask, dim=-1).mean())
    return rewards, mean_kl


class FixedKLController:
    """Constant beta. Its state is saved for inspection; on resume the config wins."""

    def __init__(self, kl_coef: float) -> None:
        self.value = kl_coef

    def update(self, current_kl: float, n_steps: int) -> None:
        """A fixed coefficient does not move."""

    def state_dict(self) -> dict[str, float]:
        return {"value": self.value}

    def load_state_dict(self, state: Mapping[str, float]) -> None:
        """Nothing to restore: the configured coefficient stays authoritative."""


class AdaptiveKLController:
    """Ziegler et al. (arXiv 1909.08593), as verl: beta *= 1 + e * n_steps / horizon.

    e = clip(current_kl / target_kl - 1, -0.2, 0.2). Unlike verl, beta is part of
    the checkpoint (`state_dict`) so a resumed run continues from the adapted value.
    """

    def __init__(self, init_kl_coef: float, target_kl: float, horizon: int) -> None:
        if target_kl <= 0 or horizon <= 0:
            raise ValueError(
                f"AdaptiveKLController needs target_kl > 0 and horizon > 0, got "
                f"target_kl={target_kl}, horizon={horizon}."
            )
        self.value = init_kl_coef
        self.target = target_kl
        self.horizon = horizon

    def update(self, current_kl: float, n_steps: int) -> None:
        proportional_error = min(max(current_kl / self.target - 1.0, -0.2), 0.2)
        self.value *= 1.0 + proportional_error * n_steps / self.horizon

    def state_dict(self) -> dict[str, float]:
        return {"value": self.value}

    def load_state_dict(self, state: Mapping[str, float]) -> None:
        if "value" not in state:
            raise ValueError(f"KL controller state needs a 'value' key, got {sorted(state)}.")
        self.value = float(state["value"])


def make_kl_controller(cfg: KLControlConfig) -> FixedKLController | AdaptiveKLController:
    """The controller named by `algorithm.kl_ctrl.type`."""
    if cfg.type == "adaptive":
        return AdaptiveKLController(cfg.kl_coef, cfg.target_kl, cfg.horizon)
    return FixedKLController(cfg.kl_coef)

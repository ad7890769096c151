"""The one input every advantage estimator takes, and the group statistics they share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

GRPO_EPSILON = 1e-6  # added to the group std, as verl


@dataclass(frozen=True)
class AdvantageInputs:
    """Everything any estimator may read; estimators ignore what they do not need."""

    token_rewards: Tensor  # (B, T) float; outcome rewards sit on the last valid token
    response_mask: Tensor  # (B, T) float 0/1; 1 on response tokens that are trained on
    group_index: Tensor  # (B,) long; equal values = samples of the same prompt
    values: Tensor | None  # (B, T) critic values; only GAE needs them
    gamma: float  # discount (GAE, REINFORCE++)
    lam: float  # GAE lambda
    norm_by_std: bool  # GRPO: divide by the group std (False is Dr.GRPO)
    # ReMax: (B,) reward of the greedy response to the same prompt (the rollout step
    # decodes and scores it; it is never trained on).
    reward_baselines: Tensor | None = None
    # Optimal token baselines: (B, T) log-prob of each sampled token under the rollout
    # policy and (B, T) sum over the vocabulary of the squared token probabilities.
    old_logprobs: Tensor | None = None
    sum_pi_squared: Tensor | None = None
    # (B, T) truncated importance weights of the rollout correction, or None.
    rollout_is_weights: Tensor | None = None

    def __post_init__(self) -> None:
        shape = tuple(self.token_rewards.shape)
        if self.token_rewards.dim() != 2:
            raise ValueError(f"token_rewards must be (B, T), got shape {shape}.")
        if tuple(self.response_mask.shape) != shape:
            raise ValueError(
                f"response_mask shape {tuple(self.response_mask.shape)} must equal "
                f"token_rewards shape {shape}."
            )
        if tuple(self.group_index.shape) != shape[:1]:
            raise ValueError(
                f"group_index must be (B,) = ({shape[0]},), got {tuple(self.group_index.shape)}."
            )
        for name in ("values", "old_logprobs", "sum_pi_squared", "rollout_is_weights"):
            other = getattr(self, name)
            if other is not None and tuple(other.shape) != shape:
                raise ValueError(
                    f"{name} shape {tuple(other.shape)} must equal token_rewards shape {shape}."
                )
        if self.reward_baselines is not None and tuple(self.reward_baselines.shape) != shape[:1]:
            raise ValueError(
                f"reward_baselines must be (B,) = ({shape[0]},), "
                f"got {tuple(self.reward_baselines.shape)}."
            )


AdvantageFn = Callable[[AdvantageInputs], tuple[Tensor, Tensor]]


def float_mask(inputs: AdvantageInputs) -> Tensor:
    return inputs.response_mask.to(inputs.token_rewards.dtype)  # (B, T)


def group_stats(scores: Tensor, group_index: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Per response: its group's mean, unbiased std, size and `score - mean`, each (B,).

    In a group whose scores are all equal the deviation is exactly 0: float32 rounding
    of the mean of [0.9, 0.9, 0.9] would otherwise leave 6e-8, which the division by
    (std + 1e-6) turns into a spurious advantage of 0.06.
    """
    _, inverse, counts = torch.unique(group_index, return_inverse=True, return_counts=True)
    size = counts.to(scores.dtype)  # (G,)
    mean = scores.new_zeros(size.shape).index_add_(0, inverse, scores) / size  # (G,)
    deviation = scores - mean[inverse]  # (B,)
    sq_sum = scores.new_zeros(size.shape).index_add_(0, inverse, deviation**2)  # (G,)
    std = (sq_sum / (size - 1).clamp(min=1)).sqrt()  # (G,) unbiased, like torch.std
    high = scores.new_full(size.shape, -torch.inf).scatter_reduce(0, inverse, scores, "amax")
    low = scores.new_full(size.shape, torch.inf).scatter_reduce(0, inverse, scores, "amin")
    deviation = torch.where((high == low)[inverse], torch.zeros_like(deviation), deviation)
    return mean[inverse], std[inverse], size[inverse], deviation

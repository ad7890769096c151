"""The typed rollout batch: named tensors, not a bag of string keys.

Layout of one row: a left-padded prompt of width P followed by a right-padded
response of width R, so every response starts at column P. Fields computed by
later phases (logprobs, values, advantages) start as None.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

import torch
from torch import Tensor


@dataclass
class RolloutBatch:
    input_ids: Tensor  # (B, P+R) long
    attention_mask: Tensor  # (B, P+R) long
    position_ids: Tensor  # (B, P+R) long
    response_mask: Tensor  # (B, R) float, 1 on generated tokens
    group_index: Tensor  # (B,) long, equal for samples of the same prompt
    scores: Tensor  # (B,) float, the reward function's score (after shaping)
    prompt_width: int  # P
    token_rewards: Tensor | None = None  # (B, R)
    old_logprobs: Tensor | None = None  # (B, R)
    ref_logprobs: Tensor | None = None  # (B, R)
    values: Tensor | None = None  # (B, R)
    advantages: Tensor | None = None  # (B, R)
    returns: Tensor | None = None  # (B, R)
    rollout_logprobs: Tensor | None = None  # (B, R) the engine's, for rollout correction
    rollout_is_weights: Tensor | None = None  # (B, R) rollout correction's weights
    reward_baselines: Tensor | None = None  # (B,) ReMax: reward of the prompt's greedy response
    sum_pi_squared: Tensor | None = None  # (B, R) optimal token baselines: sum_v pi_v^2
    # (B,) long: each row's index in its step's batch, carried through row selection, so
    # that what a step hook kept for a row finds it in a mini-batch (trainer.training.step_hooks).
    sample_ids: Tensor | None = None

    @property
    def size(self) -> int:
        return int(self.input_ids.shape[0])

    @property
    def response_width(self) -> int:
        return int(self.response_mask.shape[1])

    def select(self, rows: Tensor | slice) -> RolloutBatch:
        """A batch of the chosen rows (a view where slicing allows it)."""
        picked: dict[str, Any] = {
            f.name: value[rows]
            for f in fields(self)
            if isinstance(value := getattr(self, f.name), Tensor)
        }
        return replace(self, **picked)

    def to(self, device: torch.device) -> RolloutBatch:
        moved: dict[str, Any] = {
            f.name: value.to(device)
            for f in fields(self)
            if isinstance(value := getattr(self, f.name), Tensor)
        }
        return replace(self, **moved)


def build_batch(
    prompts: list[list[int]],
    responses: list[list[int]],
    group_index: list[int],
    scores: list[float],
    pad_token_id: int,
    response_masks: list[list[int] | None] | None = None,
) -> RolloutBatch:
    """Pack prompt/response token lists into the left|right padded layout.

    `response_masks` (multi-turn) marks each response token 1 when the policy generated
    it and 0 when it was inserted (tool results, user turns): those are attended to
    but carry no loss. None, or a None row, means every response token is the policy's."""
    width_p = max(len(p) for p in prompts)
    width_r = max(1, max(len(r) for r in responses))
    rows = len(prompts)
    input_ids = torch.full((rows, width_p + width_r), pad_token_id, dtype=torch.long)
    attention = torch.zeros((rows, width_p + width_r), dtype=torch.long)
    for i, (prompt, response) in enumerate(zip(prompts, responses, strict=True)):
        start = width_p - len(prompt)
        input_ids[i, start:width_p] = torch.tensor(prompt, dtype=torch.long)
        attention[i, start:width_p] = 1
        if response:
            input_ids[i, width_p : width_p + len(response)] = torch.tensor(response)
            attention[i, width_p : width_p + len(response)] = 1
    position_ids = (attention.cumsum(dim=1) - 1).clamp(min=0)
    response_mask = attention[:, width_p:].float()
    for i, mask in enumerate(response_masks or ()):
        if mask is not None:
            if len(mask) != len(responses[i]):
                raise ValueError(
                    f"response mask {i} has {len(mask)} entries for {len(responses[i])} tokens"
                )
            response_mask[i, : len(mask)] = torch.tensor(mask, dtype=torch.float32)
    return RolloutBatch(
        input_ids=input_ids,
        attention_mask=attention,
        position_ids=position_ids,
        response_mask=response_mask,
        group_index=torch.tensor(group_index, dtype=torch.long),
        scores=torch.tensor(scores, dtype=torch.float32),
        prompt_width=width_p,
    )

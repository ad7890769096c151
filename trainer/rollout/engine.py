"""The rollout engine protocol: what the trainer needs from a generator.

An engine turns prompt token ids into sampled completions with the token ids
and the sampling-time log-probabilities, takes new weights after each update,
and can release its memory between phases (sleep/wake) when colocated with
the actor.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import torch

from trainer.config.sampling import SamplingParams

__all__ = ["Completion", "FinishReason", "RolloutEngine", "SamplingParams"]

# Why a response ended: its EOS token, a stop string, the token budget, or (a multi-turn
# episode, trainer.env.episodes) the turn budget.
FinishReason = Literal["eos", "stop", "length", "max_turns"]


@dataclass
class Completion:
    prompt_index: int  # index into the prompts given to generate()
    token_ids: list[int]  # response tokens only, EOS included when generated
    logprobs: list[float]  # log p(token) under the sampling distribution's model logits
    text: str  # decoded response (special tokens skipped)
    finish_reason: FinishReason
    extra: dict[str, float] = field(default_factory=dict)
    # Multi-turn episodes (trainer.env.episodes) only; None for a single generation.
    # 1 where the token is the policy's own, 0 for inserted tool results / user turns.
    response_mask: list[int] | None = None
    turns: list[dict[str, Any]] | None = None  # SampleRecord.turns' shape
    answer: str | None = None  # the last assistant message: what the reward function scores

    @property
    def turn_reward(self) -> float:
        """Sum of the environment's per-turn rewards (0.0 for single-turn)."""
        return sum(float(t.get("reward") or 0.0) for t in self.turns or ())


class RolloutEngine(Protocol):
    def generate(self, prompts: list[list[int]], sampling: SamplingParams) -> list[Completion]:
        """Return len(prompts) * sampling.n completions, prompt-major order."""
        ...

    def update_weights(self, state: Mapping[str, torch.Tensor]) -> None:
        """Load new policy weights (a full, unsharded state dict)."""
        ...

    def sleep(self) -> None:
        """Release generation memory (KV cache, weights copy) until wake()."""
        ...

    def wake(self) -> None: ...

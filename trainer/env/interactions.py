"""Interactions: a simulated user that answers a message without tool calls.

verl's interactions (``multi_turn.interaction_config_path``) are Python classes; RL
Studio's are built-ins chosen by `rollout.multi_turn.interaction`. They run in the
trainer: they execute no code, only score the model's text with a built-in scorer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from trainer.config.multi_turn_section import InteractionName
from trainer.env.protocol import EpisodeState
from trainer.env.trainer_tools import gsm8k_reward


@dataclass(frozen=True)
class InteractionReply:
    done: bool  # the episode ends; `text` is not inserted
    text: str  # the user's message
    reward: float  # the turn's score (verl's `turn_scores`)


class Interaction(Protocol):
    name: str

    def reply(self, state: EpisodeState, message: str) -> InteractionReply: ...


CORRECT = "Your response is correct!"
INCORRECT = "Your response is incorrect! You need to reflect on your answer and try again."


class Gsm8kInteraction:
    """verl's Gsm8kInteraction: the last assistant message is scored with gsm8k's strict
    method (``#### <answer>``) against ``extra_info.interaction_kwargs.ground_truth``,
    else the row's ground truth; right ends the episode, wrong asks again."""

    name = "gsm8k"

    def reply(self, state: EpisodeState, message: str) -> InteractionReply:
        kwargs = state.row.extra_info.get("interaction_kwargs")
        truth = kwargs.get("ground_truth") if isinstance(kwargs, dict) else None
        if truth is None:
            truth = state.row.ground_truth
        reward = gsm8k_reward(message, truth, method="strict")
        if reward == 1.0:
            return InteractionReply(True, CORRECT, reward)
        return InteractionReply(False, INCORRECT, reward)


def make_interaction(name: InteractionName) -> Interaction | None:
    if name == "gsm8k":
        return Gsm8kInteraction()
    return None

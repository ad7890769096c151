"""The environment protocol of multi-turn rollouts: what an episode talks to.

An episode starts from a dataset row (`Environment.reset`) and alternates: the
model writes a message, the environment answers it (`Environment.step`) with the
next observation (tool results or a user message), whether the episode is done,
and optionally a per-turn reward. The episode's final reward is the run's reward
function on the last assistant message, plus the per-turn rewards.

`step` takes the messages of every running episode at once so that their tool calls
run as one batch in the sandbox (tools are untrusted code, like reward functions).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from trainer.rollout.collect import PromptItem

ObservationRole = Literal["tool", "user"]


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model is told about it: a name, what it does, and a JSON schema of
    its arguments (rendered through the tokenizer's chat template, ``tools=``)."""

    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of the arguments object

    def as_chat_template_tool(self) -> dict[str, Any]:
        """The OpenAI-style function entry that chat templates expect in ``tools``."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]

    def as_turn_entry(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": self.arguments}


@dataclass(frozen=True)
class Observation:
    """One message the environment inserts into the context (never trained on)."""

    role: ObservationRole
    content: str
    name: str = ""  # the tool that produced it (tool results)
    error: str = ""  # why the call failed; empty on success

    def as_turn(self) -> dict[str, Any]:
        turn: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.role == "tool":
            turn["name"] = self.name
            if self.error:
                turn["error"] = self.error
        return turn


@dataclass
class EpisodeState:
    """What an environment keeps about one running episode."""

    row: PromptItem
    turn: int = 0  # assistant messages answered so far
    data: dict[str, Any] = field(default_factory=dict)  # the environment's own notes


@dataclass(frozen=True)
class StepOutcome:
    observations: tuple[Observation, ...]  # appended to the context unless done
    done: bool
    reward: float | None = None  # per-turn reward, added to the episode's score
    tool_calls: tuple[ToolCall, ...] = ()  # the calls parsed from the message


class Environment(Protocol):
    """A multi-turn environment (see the module docstring)."""

    name: str
    tools: tuple[ToolSpec, ...]  # rendered into every prompt; may be empty

    def reset(self, row: PromptItem) -> EpisodeState: ...

    def step(self, episodes: Sequence[EpisodeState], messages: Sequence[str]) -> list[StepOutcome]:
        """Answer one assistant message per episode (same order); never raises for a
        model's mistake: a malformed call or a failing tool becomes an observation."""
        ...

    def close(self) -> None: ...

"""The `rollout.multi_turn` section: episodes with tools (trainer.env, docs/multi-turn.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from trainer.config.section import Section

EnvironmentName = Literal["calculator", "python"]

# The studio stores at most 64 turns per sample; an assistant message and its tool
# results are several turns, so a rollout keeps well under it.
MAX_TURNS = 16


class MultiTurnConfig(Section):
    enabled: bool = Field(
        False,
        description="Roll out multi-turn episodes: the model calls the environment's tools "
        "(run in the reward sandbox) until it answers without a call. Only the model's own "
        "tokens carry loss; `rollout.max_new_tokens` bounds each assistant message.",
    )
    environment: EnvironmentName = Field(
        "calculator",
        description="Built-in environment: `calculator` (arithmetic expressions) or "
        "`python` (runs a program, returns what it printed).",
    )
    max_turns: int = Field(
        4, ge=1, le=MAX_TURNS, description="Assistant messages per episode at most."
    )
    max_episode_tokens: int = Field(
        256,
        ge=1,
        le=32768,
        description="Token budget of an episode after the prompt: the model's messages and "
        "the inserted tool results together. The episode ends when the next block would "
        "pass it.",
    )
    tool_timeout_s: float = Field(
        5.0, gt=0.0, le=600.0, description="Wall-clock limit of one tool call."
    )
    tool_workers: int = Field(1, ge=1, le=64, description="Sandboxed worker processes per tool.")
    max_tool_result_chars: int = Field(
        2000,
        ge=16,
        le=65536,
        description="A tool's printed result is cut to this many characters.",
    )

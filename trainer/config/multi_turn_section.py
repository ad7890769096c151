"""The `rollout.multi_turn` section: episodes with tools (trainer.env, docs/multi-turn.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from trainer.config.section import Section

EnvironmentName = Literal["calculator", "python", "gsm8k_answer", "search"]
InteractionName = Literal["none", "gsm8k"]

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
        description="Built-in environment: `calculator` (arithmetic expressions), "
        "`python` (runs a program, returns what it printed), `gsm8k_answer` (verl's Gsm8kTool: "
        "the model submits an answer and is told its score against the row's ground truth) "
        "or `search` (verl's SearchTool: passages from the retriever the operator sets with "
        "RLSTUDIO_SEARCH_RETRIEVER_URL).",
    )
    interaction: InteractionName = Field(
        "none",
        description="A simulated user answering a message without tool calls: `gsm8k` "
        "(verl's Gsm8kInteraction) checks the answer against the row's ground truth, ends "
        "the episode when it is right and asks the model to reflect when it is wrong.",
    )
    max_user_turns: int | None = Field(
        None,
        ge=1,
        le=MAX_TURNS,
        description="Inserted turns per episode at most (tool results of one message and "
        "interaction replies each count one, as verl's `max_user_turns`); the episode ends "
        "with the message after the last one. null: bounded by `max_turns` only.",
    )
    add_step_rewards: bool = Field(
        True,
        description="Add the per-turn rewards of tools and interactions to the episode's "
        "score. verl records them (`tool_rewards`, `turn_scores`) without adding them, so a "
        "translated verl config turns this off.",
    )
    search_topk: int = Field(
        3, ge=1, le=50, description="Passages per query of the `search` environment."
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

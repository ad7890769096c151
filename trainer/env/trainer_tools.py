"""Tools run by the trainer process: verl's Gsm8kTool and SearchTool.

Sandboxed tools (trainer.env.tools) run code; these two run none. `gsm8k_answer` scores
a submitted answer with RL Studio's own gsm8k scorer (a regex over at most 300
characters of the model's text), and `search` posts the queries to the operator's
retriever (trainer.env.retriever), a network call the sandbox could not make. Each
answers with verl's text and verl's step reward.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from trainer.env.protocol import EpisodeState, Observation, ToolCall, ToolSpec
from trainer.env.retriever import (
    MAX_QUERIES,
    MAX_QUERY_CHARS,
    Retriever,
    RetrieverError,
    search_error_text,
    search_result_text,
)
from trainer.rewards.templates.gsm8k import extract_solution

MAX_SEARCH_THREADS = 8  # concurrent retriever requests of one turn


@dataclass(frozen=True)
class ToolResult:
    observation: Observation
    reward: float  # the step reward verl's tool returns with its response


class TrainerTool(Protocol):
    spec: ToolSpec

    def run(self, calls: Sequence[tuple[EpisodeState, ToolCall]]) -> list[ToolResult]:
        """One result per call, in order; never raises for what a model wrote."""
        ...


def row_kwargs(state: EpisodeState, key: str, name: str) -> dict[str, Any]:
    """verl's per-row arguments: ``extra_info[key][name]`` (tools_kwargs, interaction_kwargs)."""
    section = state.row.extra_info.get(key)
    value = section.get(name) if isinstance(section, dict) else None
    return value if isinstance(value, dict) else {}


def gsm8k_reward(solution: str, ground_truth: Any, method: str) -> float:
    """verl's gsm8k `compute_score` (format_score 0, score 1): an int 0 when no answer is
    found, as verl returns it, so the texts that print it read the same."""
    answer = extract_solution(solution, method=method)
    if answer is None:
        return 0
    return 1.0 if answer == str(ground_truth).strip() else 0.0


GSM8K_ANSWER_SPEC = ToolSpec(
    name="calc_gsm8k_reward",
    # verl's example tool config (gsm8k_tool_config.yaml) describes it so.
    description="A tool for calculating the reward of gsm8k. (1.0 if parsed answer is "
    "correct, 0.0 if parsed answer is incorrect or not correctly parsed)",
    parameters={
        "type": "object",
        "properties": {
            "answer": {
                "type": "string",
                "description": "The model's answer to the GSM8K math problem, must be a digits",
            }
        },
        "required": ["answer"],
    },
)


class Gsm8kAnswerTool:
    """verl's Gsm8kTool: the model submits an answer, the tool says how it scored.

    The ground truth is verl's ``extra_info.tools_kwargs.calc_gsm8k_reward.create_kwargs
    .ground_truth`` when the row has it, else the row's ground truth (RL Studio's rows
    carry it once). verl creates a tool instance per call, so the step reward compares
    each answer with a fresh 0.0: 0.0 when it is right, -0.05 otherwise."""

    spec = GSM8K_ANSWER_SPEC

    def run(self, calls: Sequence[tuple[EpisodeState, ToolCall]]) -> list[ToolResult]:
        return [self._one(state, call) for state, call in calls]

    def _one(self, state: EpisodeState, call: ToolCall) -> ToolResult:
        answer = call.arguments.get("answer", "")
        if not isinstance(answer, str):
            answer = str(answer)
        create = row_kwargs(state, "tools_kwargs", self.spec.name).get("create_kwargs")
        truth = create.get("ground_truth") if isinstance(create, dict) else None
        if truth is None:
            truth = state.row.ground_truth
        response = answer if answer.startswith("#### ") else "#### " + answer
        reward = gsm8k_reward(response, truth, method="flexible")
        text = f"Current parsed {answer=} {reward=}"
        return ToolResult(Observation("tool", text, name=self.spec.name), 0.0 if reward else -0.05)


SEARCH_SPEC = ToolSpec(
    name="search",
    # verl's example tool config (search_tool_config.yaml) describes it so.
    description="Searches the web for relevant information based on the given query.",
    parameters={
        "type": "object",
        "properties": {
            "query_list": {
                "type": "array",
                "items": {"type": "string"},
                "description": "A list of fully-formed semantic queries. The tool will return "
                "search results for each query.",
            }
        },
        "required": ["query_list"],
    },
)

_MISSING_QUERIES = "Error: 'query_list' is missing, empty, or not a list in parameters."


class SearchTool:
    """verl's SearchTool: one retriever request per call, the passages as verl writes
    them; the step reward is 0.0, as verl's. A failed request is that call's result."""

    spec = SEARCH_SPEC

    def __init__(self, retriever: Retriever, topk: int) -> None:
        self.retriever = retriever
        self.topk = topk

    def run(self, calls: Sequence[tuple[EpisodeState, ToolCall]]) -> list[ToolResult]:
        if not calls:
            return []
        with ThreadPoolExecutor(min(MAX_SEARCH_THREADS, len(calls))) as pool:
            return list(pool.map(lambda c: self._one(c[1]), calls))

    def _one(self, call: ToolCall) -> ToolResult:
        queries = call.arguments.get("query_list")
        if not queries or not isinstance(queries, list):
            text = json.dumps({"result": _MISSING_QUERIES})
            return ToolResult(Observation("tool", text, name="search", error=_MISSING_QUERIES), 0.0)
        cut = [str(q)[:MAX_QUERY_CHARS] for q in queries[:MAX_QUERIES]]
        try:
            results = self.retriever.search(cut, self.topk)
        except RetrieverError as exc:
            reason = str(exc)
            observation = Observation("tool", search_error_text(reason), "search", error=reason)
            return ToolResult(observation, 0.0)
        return ToolResult(Observation("tool", search_result_text(results), name="search"), 0.0)

"""`ToolEnvironment`: the model calls sandboxed tools until it answers without one.

Each assistant message is parsed for tool calls (trainer.env.toolcalls). A message
with none ends the episode (its text is the answer the reward function scores); a
message with calls gets one tool observation per call, in the order written: the
tool's printed result, or ``error: <reason>`` for a malformed call or a failed run.
The built-ins: ``calculator`` (the arith tool task) and ``python`` (code execution).
"""

from __future__ import annotations

from collections.abc import Sequence

from trainer.env.protocol import EpisodeState, Observation, StepOutcome, ToolCall, ToolSpec
from trainer.env.toolcalls import parse_tool_calls
from trainer.env.tools import SandboxedTool, ToolRunner, failed
from trainer.rollout.collect import PromptItem


class ToolEnvironment:
    def __init__(self, name: str, tools: Sequence[SandboxedTool], runner: ToolRunner) -> None:
        self.name = name
        self.tools: tuple[ToolSpec, ...] = tuple(t.spec for t in tools)
        self.tool_names = frozenset(t.name for t in self.tools)
        self.runner = runner

    def reset(self, row: PromptItem) -> EpisodeState:
        return EpisodeState(row=row)

    def step(self, episodes: Sequence[EpisodeState], messages: Sequence[str]) -> list[StepOutcome]:
        if len(episodes) != len(messages):
            raise ValueError(f"{len(episodes)} episodes but {len(messages)} messages")
        parsed = [parse_tool_calls(m, self.tool_names) for m in messages]
        # Every valid call of every episode runs in one sandbox batch per tool.
        calls: list[ToolCall] = [c for p in parsed for c in p.calls]
        results = iter(self.runner.run(calls))
        outcomes: list[StepOutcome] = []
        for episode, message in zip(episodes, parsed, strict=True):
            episode.turn += 1
            if not message.items:
                outcomes.append(StepOutcome(observations=(), done=True))
                continue
            observations: list[Observation] = [
                next(results) if isinstance(item, ToolCall) else failed("", item.reason)
                for item in message.items
            ]
            outcomes.append(
                StepOutcome(observations=tuple(observations), done=False, tool_calls=message.calls)
            )
        return outcomes

    def close(self) -> None:
        self.runner.close()

"""`ToolEnvironment`: the model calls tools until it answers without one.

Each assistant message is parsed for tool calls (trainer.env.toolcalls). A message
with calls gets one tool observation per call, in the order written: the tool's
result, or ``error: <reason>`` for a malformed call or a failed run. A message with
none is the answer: it ends the episode, unless an interaction (trainer.env.interactions)
replies with a user turn. Sandboxed tools (``calculator``, ``python``) run in the reward
sandbox; trainer tools (``calc_gsm8k_reward``, ``search``) in the trainer process. The
step's reward is the sum of its tools' step rewards, or the interaction's score.
"""

from __future__ import annotations

from collections.abc import Sequence

from trainer.env.interactions import Interaction
from trainer.env.protocol import EpisodeState, Observation, StepOutcome, ToolCall, ToolSpec
from trainer.env.toolcalls import parse_tool_calls
from trainer.env.tools import SandboxedTool, ToolRunner, failed
from trainer.env.trainer_tools import ToolResult, TrainerTool
from trainer.rollout.collect import PromptItem


class ToolEnvironment:
    def __init__(
        self,
        name: str,
        tools: Sequence[SandboxedTool],
        runner: ToolRunner,
        trainer_tools: Sequence[TrainerTool] = (),
        interaction: Interaction | None = None,
    ) -> None:
        self.name = name
        self.tools: tuple[ToolSpec, ...] = tuple(t.spec for t in tools) + tuple(
            t.spec for t in trainer_tools
        )
        self.tool_names = frozenset(t.name for t in self.tools)
        self.runner = runner
        self.trainer_tools = {t.spec.name: t for t in trainer_tools}
        self.interaction = interaction

    def reset(self, row: PromptItem) -> EpisodeState:
        return EpisodeState(row=row)

    def step(self, episodes: Sequence[EpisodeState], messages: Sequence[str]) -> list[StepOutcome]:
        if len(episodes) != len(messages):
            raise ValueError(f"{len(episodes)} episodes but {len(messages)} messages")
        parsed = [parse_tool_calls(m, self.tool_names) for m in messages]
        results = self._run_calls(episodes, [p.calls for p in parsed])
        outcomes: list[StepOutcome] = []
        for episode, text, message, own in zip(episodes, messages, parsed, results, strict=True):
            episode.turn += 1
            if not message.items:
                outcomes.append(self._answer(episode, text))
                continue
            ran = iter(own)
            observations: list[Observation] = []
            rewards: list[float] = []
            for item in message.items:
                if isinstance(item, ToolCall):
                    result = next(ran)
                    observations.append(result.observation)
                    rewards.append(result.reward)
                else:
                    observations.append(failed("", item.reason))
            outcomes.append(
                StepOutcome(
                    observations=tuple(observations),
                    done=False,
                    reward=sum(rewards) if self.trainer_tools and rewards else None,
                    tool_calls=message.calls,
                )
            )
        return outcomes

    def _answer(self, episode: EpisodeState, message: str) -> StepOutcome:
        if self.interaction is None:
            return StepOutcome(observations=(), done=True)
        reply = self.interaction.reply(episode, message)
        observations = () if reply.done else (Observation("user", reply.text),)
        return StepOutcome(observations=observations, done=reply.done, reward=reply.reward)

    def _run_calls(
        self, episodes: Sequence[EpisodeState], calls: list[tuple[ToolCall, ...]]
    ) -> list[list[ToolResult]]:
        """Every valid call of every episode: sandboxed ones in one sandbox batch per tool,
        trainer ones in one `run` per tool; results grouped back by episode, in order."""
        flat = [(i, call) for i, own in enumerate(calls) for call in own]
        out: list[ToolResult | None] = [None] * len(flat)
        sandboxed = [k for k, (_, call) in enumerate(flat) if call.name not in self.trainer_tools]
        observed = self.runner.run([flat[k][1] for k in sandboxed])
        for k, observation in zip(sandboxed, observed, strict=True):
            out[k] = ToolResult(observation, 0.0)
        for name, tool in self.trainer_tools.items():
            mine = [k for k, (_, call) in enumerate(flat) if call.name == name]
            ran = tool.run([(episodes[flat[k][0]], flat[k][1]) for k in mine])
            for k, result in zip(mine, ran, strict=True):
                out[k] = ToolResult(self._clip(result.observation), result.reward)
        grouped: list[list[ToolResult]] = [[] for _ in calls]
        for (i, _), found in zip(flat, out, strict=True):
            grouped[i].append(found or ToolResult(failed("", "no result"), 0.0))
        return grouped

    def _clip(self, observation: Observation) -> Observation:
        limit = self.runner.max_result_chars
        if len(observation.content) <= limit:
            return observation
        content = observation.content[:limit] + " [truncated]"
        return Observation(observation.role, content, observation.name, observation.error)

    def close(self) -> None:
        self.runner.close()

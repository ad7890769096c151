"""Tools run as untrusted code in the reward sandbox, one `SandboxPool` per tool.

A tool's source is a standalone module defining ``run_tool(data_source, solution_str,
ground_truth, extra_info)`` (the reward signature, so the hardened pool runs it
unchanged): ``solution_str`` is the call's arguments as JSON, and what the function
prints is the tool's result. An exception, a time-out, a killed process or a refused
syscall fails that one call; its reason becomes the observation the model sees.
"""

from __future__ import annotations

import importlib.resources
import json
from collections.abc import Sequence
from dataclasses import dataclass

from trainer.env.protocol import Observation, ToolCall, ToolSpec
from trainer.rewards.contract import RewardRequest
from trainer.rewards.sandbox.pool import SandboxLimits, SandboxPool

TOOL_FUNCTION = "run_tool"


@dataclass(frozen=True)
class SandboxedTool:
    spec: ToolSpec
    source: str  # a module defining `run_tool` (see the module docstring)


def builtin_tool_source(module: str) -> str:
    resource = importlib.resources.files("trainer.env.tool_sources").joinpath(f"{module}.py")
    return resource.read_text(encoding="utf-8")


CALCULATOR = SandboxedTool(
    ToolSpec(
        name="calculator",
        description="Evaluate an arithmetic expression (+ - * / // % ** and parentheses).",
        parameters={
            "type": "object",
            "properties": {"expression": {"type": "string", "description": "e.g. 37+48"}},
            "required": ["expression"],
        },
    ),
    builtin_tool_source("calculator"),
)

PYTHON = SandboxedTool(
    ToolSpec(
        name="python",
        description="Run a Python program and return what it printed.",
        parameters={
            "type": "object",
            "properties": {"code": {"type": "string", "description": "the program"}},
            "required": ["code"],
        },
    ),
    builtin_tool_source("python_exec"),
)


class ToolRunner:
    """Runs tool calls in sandboxed pools; every call has `timeout_s` of wall clock."""

    def __init__(
        self,
        tools: Sequence[SandboxedTool],
        timeout_s: float = 5.0,
        workers: int = 1,
        max_result_chars: int = 2000,
        require_full_isolation: bool | None = None,
    ) -> None:
        self.max_result_chars = max_result_chars
        limits = SandboxLimits(timeout_s=timeout_s)
        self.pools: dict[str, SandboxPool] = {}
        try:
            for tool in tools:
                self.pools[tool.spec.name] = SandboxPool(
                    tool.source,
                    TOOL_FUNCTION,
                    workers,
                    limits,
                    require_full_isolation=require_full_isolation,
                    filename=f"<tool {tool.spec.name}>",
                )
        except BaseException:
            self.close()
            raise

    def run(self, calls: Sequence[ToolCall]) -> list[Observation]:
        """One observation per call, in order; calls of one tool run as one batch."""
        out: list[Observation | None] = [None] * len(calls)
        by_tool: dict[str, list[int]] = {}
        for i, call in enumerate(calls):
            if call.name not in self.pools:
                out[i] = failed(call.name, f"unknown tool {call.name!r}")
            else:
                by_tool.setdefault(call.name, []).append(i)
        for name, indices in by_tool.items():
            requests = [
                RewardRequest(name, json.dumps(calls[i].arguments), None, {}) for i in indices
            ]
            for i, result in zip(indices, self.pools[name].score_batch(requests), strict=True):
                if result.error:
                    out[i] = failed(name, result.error[: self.max_result_chars])
                else:
                    out[i] = Observation("tool", self._clip(result.output.strip()), name=name)
        return [o if o is not None else failed("", "no result") for o in out]

    def _clip(self, text: str) -> str:
        if len(text) <= self.max_result_chars:
            return text
        return text[: self.max_result_chars] + " [truncated]"

    def close(self) -> None:
        for pool in self.pools.values():
            pool.close()


def failed(name: str, reason: str) -> Observation:
    return Observation("tool", f"error: {reason}", name=name, error=reason)

"""The Reporter protocol: how the trainer tells the world what happened.

Metrics go through a reporter, never through logs. A run has several
reporters (console, JSONL, studio) combined by `MultiReporter`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

RunStatus = Literal["running", "succeeded", "failed", "cancelled"]


@dataclass
class SampleRecord:
    """One rollout sample as shown in the studio's viewer."""

    step: int
    group_id: str  # prompt uid; whole GRPO groups are reported together
    data_source: str
    prompt: str
    response: str
    ground_truth: str
    score: float
    components: dict[str, float] = field(default_factory=dict)
    # The reward's extra info: its dict return's strings, None, lists and dicts (verl's
    # reward_extra_info), at most trainer.rewards.contract.MAX_EXTRA_BYTES of JSON.
    reward_extra: dict[str, Any] = field(default_factory=dict)
    advantage: float = 0.0
    prompt_length: int = 0
    response_length: int = 0
    finish_reason: str = ""
    error: str = ""
    split: Literal["train", "val", "eval"] = "train"
    # Per-token view (a seeded fraction of stored samples): "token_ids", "tokens"
    # (decoded one by one), "logprobs" (sampling), "advantages" (training only).
    token_data: dict[str, list[Any]] | None = None
    # Multi-turn episodes: the conversation after the prompt, in order. Each turn is
    # {"role": "assistant"|"tool"|"user", "content": str} plus, when present,
    # "tool_calls": [{"name": str, "arguments": dict}] (assistant), "name": str and
    # "error": str (tool results), "reward": float (per-turn reward). None for single-turn.
    turns: list[dict[str, Any]] | None = None
    # The prompt's row: its 0-based position in its data file (train_files for training
    # samples, val_files for validation and evaluation ones); None: from no file row.
    # The studio finds the dataset version's row by it (a label export copies that row).
    row: int | None = None


class Reporter(Protocol):
    def metrics(self, step: int, values: dict[str, float]) -> None: ...

    def samples(self, step: int, samples: list[SampleRecord]) -> None: ...

    def log(self, level: str, message: str) -> None: ...

    def checkpoint(self, step: int, path: str) -> None: ...

    def status(self, status: RunStatus, detail: str = "") -> None: ...

    def progress(self, step: int, total: int) -> None: ...

    def close(self) -> None: ...


class MultiReporter:
    """Fans every call out to several reporters, in order."""

    def __init__(self, reporters: list[Any]) -> None:
        self.reporters = reporters

    def metrics(self, step: int, values: dict[str, float]) -> None:
        for r in self.reporters:
            r.metrics(step, values)

    def samples(self, step: int, samples: list[SampleRecord]) -> None:
        for r in self.reporters:
            r.samples(step, samples)

    def log(self, level: str, message: str) -> None:
        for r in self.reporters:
            r.log(level, message)

    def checkpoint(self, step: int, path: str) -> None:
        for r in self.reporters:
            r.checkpoint(step, path)

    def status(self, status: RunStatus, detail: str = "") -> None:
        for r in self.reporters:
            r.status(status, detail)

    def progress(self, step: int, total: int) -> None:
        for r in self.reporters:
            r.progress(step, total)

    def close(self) -> None:
        for r in self.reporters:
            r.close()

"""How completions are sampled: the one definition of the sampling knobs and defaults.

Training (`RolloutConfig`), the `trainer sample` command, the studio's reward
test-runs and their API serializer all take their defaults from `SamplingParams`, so
a test-run samples the way a run does unless asked otherwise. Free of torch: the
studio imports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SamplingParams:
    n: int = 1  # completions per prompt; outputs are grouped prompt-major
    temperature: float = 1.0  # 0 means greedy
    top_p: float = 1.0
    top_k: int = 0  # 0 disables top-k
    max_new_tokens: int = 64
    stop: tuple[str, ...] = ()  # strings that end a completion (kept in it)
    seed: int | None = None  # makes a call reproducible when set

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SamplingParams:
        """Back from `dataclasses.asdict` through JSON (which turns the tuple to a list)."""
        return cls(**{**data, "stop": tuple(data.get("stop", ()))})


DEFAULT_SAMPLING = SamplingParams()

"""Reward functions: the verl-compatible contract, built-ins, loading, and the sandbox.

Light to import (stdlib only, never torch): the studio imports it to test-run and
validate user code. Start from `make_scorer` (trainer) or `SandboxPool` (studio).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trainer.rewards.builtins import BUILTIN_REWARDS, builtin_source, weighted
    from trainer.rewards.contract import (
        RewardRequest,
        RewardResult,
        RewardScorer,
        error_rate,
        normalise,
    )
    from trainer.rewards.inprocess import InProcessScorer
    from trainer.rewards.loader import (
        RewardCodeError,
        check_source,
        load_reward,
        load_reward_file,
    )
    from trainer.rewards.sandbox.limits import SandboxLimits
    from trainer.rewards.sandbox.pool import (
        SandboxPool,
        SandboxUnavailableError,
        isolation_report,
    )
    from trainer.rewards.sandbox.scorers import make_scorer

# Exported names and their modules, imported on first use: the sandbox's zygote imports
# `trainer.rewards.contract` and must not pull in subprocess, threading and logging (every
# page the zygote holds makes each fork slower).
_EXPORTS = {
    "BUILTIN_REWARDS": "builtins",
    "builtin_source": "builtins",
    "weighted": "builtins",
    "RewardRequest": "contract",
    "RewardResult": "contract",
    "RewardScorer": "contract",
    "error_rate": "contract",
    "normalise": "contract",
    "InProcessScorer": "inprocess",
    "RewardCodeError": "loader",
    "check_source": "loader",
    "load_reward": "loader",
    "load_reward_file": "loader",
    "SandboxLimits": "sandbox.limits",
    "SandboxPool": "sandbox.pool",
    "SandboxUnavailableError": "sandbox.pool",
    "isolation_report": "sandbox.pool",
    "make_scorer": "sandbox.scorers",
}
__all__ = [
    "BUILTIN_REWARDS",
    "InProcessScorer",
    "RewardCodeError",
    "RewardRequest",
    "RewardResult",
    "RewardScorer",
    "SandboxLimits",
    "SandboxPool",
    "SandboxUnavailableError",
    "builtin_source",
    "check_source",
    "error_rate",
    "isolation_report",
    "load_reward",
    "load_reward_file",
    "make_scorer",
    "normalise",
    "weighted",
]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'trainer.rewards' has no attribute {name!r}")
    return getattr(importlib.import_module(f"trainer.rewards.{_EXPORTS[name]}"), name)

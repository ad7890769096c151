"""The built-in environments, chosen by `rollout.multi_turn.environment`."""

from __future__ import annotations

from typing import Any

from trainer.config.multi_turn_section import EnvironmentName, MultiTurnConfig
from trainer.config.schema import RunConfig
from trainer.env.episodes import EpisodeLimits, EpisodeRunner
from trainer.env.tool_env import ToolEnvironment
from trainer.env.tools import CALCULATOR, PYTHON, SandboxedTool, ToolRunner
from trainer.rollout.engine import RolloutEngine

BUILTIN_TOOLS: dict[EnvironmentName, tuple[SandboxedTool, ...]] = {
    "calculator": (CALCULATOR,),
    "python": (PYTHON,),
}


def make_environment(
    cfg: MultiTurnConfig, require_full_isolation: bool | None = None
) -> ToolEnvironment:
    tools = BUILTIN_TOOLS[cfg.environment]
    runner = ToolRunner(
        tools,
        timeout_s=cfg.tool_timeout_s,
        workers=cfg.tool_workers,
        max_result_chars=cfg.max_tool_result_chars,
        require_full_isolation=require_full_isolation,
    )
    return ToolEnvironment(cfg.environment, tools, runner)


def make_episode_runner(
    cfg: RunConfig, engine: RolloutEngine, tokenizer: Any
) -> EpisodeRunner | None:
    """The multi-turn rollout `cfg` asks for, or None for single-turn generation."""
    mt = cfg.rollout.multi_turn
    if not mt.enabled:
        return None
    limits = EpisodeLimits(max_turns=mt.max_turns, max_episode_tokens=mt.max_episode_tokens)
    return EpisodeRunner(engine, make_environment(mt), tokenizer, limits)

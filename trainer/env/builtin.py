"""The built-in environments, chosen by `rollout.multi_turn.environment`."""

from __future__ import annotations

from typing import Any

from trainer.config.multi_turn_section import EnvironmentName, MultiTurnConfig
from trainer.config.schema import RunConfig
from trainer.env.episodes import EpisodeLimits, EpisodeRunner
from trainer.env.interactions import make_interaction
from trainer.env.retriever import Retriever, retriever_url_from_environment
from trainer.env.tool_env import ToolEnvironment
from trainer.env.tools import CALCULATOR, PYTHON, SandboxedTool, ToolRunner
from trainer.env.trainer_tools import Gsm8kAnswerTool, SearchTool, TrainerTool
from trainer.rollout.engine import RolloutEngine

# Tools run in the reward sandbox (they run code) ...
BUILTIN_TOOLS: dict[EnvironmentName, tuple[SandboxedTool, ...]] = {
    "calculator": (CALCULATOR,),
    "python": (PYTHON,),
    "gsm8k_answer": (),
    "search": (),
}


def trainer_tools(cfg: MultiTurnConfig) -> tuple[TrainerTool, ...]:
    """... and tools run by the trainer process (trainer.env.trainer_tools)."""
    if cfg.environment == "gsm8k_answer":
        return (Gsm8kAnswerTool(),)
    if cfg.environment == "search":
        retriever = Retriever(retriever_url_from_environment(), timeout_s=cfg.tool_timeout_s)
        return (SearchTool(retriever, topk=cfg.search_topk),)
    return ()


def make_environment(
    cfg: MultiTurnConfig, require_full_isolation: bool | None = None
) -> ToolEnvironment:
    tools = BUILTIN_TOOLS[cfg.environment]
    own = trainer_tools(cfg)  # first: a missing retriever URL fails before pools start
    runner = ToolRunner(
        tools,
        timeout_s=cfg.tool_timeout_s,
        workers=cfg.tool_workers,
        max_result_chars=cfg.max_tool_result_chars,
        require_full_isolation=require_full_isolation,
    )
    return ToolEnvironment(cfg.environment, tools, runner, own, make_interaction(cfg.interaction))


def make_episode_runner(
    cfg: RunConfig, engine: RolloutEngine, tokenizer: Any
) -> EpisodeRunner | None:
    """The multi-turn rollout `cfg` asks for, or None for single-turn generation."""
    mt = cfg.rollout.multi_turn
    if not mt.enabled:
        return None
    limits = EpisodeLimits(
        max_turns=mt.max_turns,
        max_episode_tokens=mt.max_episode_tokens,
        max_user_turns=mt.max_user_turns,
    )
    return EpisodeRunner(
        engine,
        make_environment(mt),
        tokenizer,
        limits,
        add_step_rewards=mt.add_step_rewards,
        template_kwargs=cfg.data.chat_template_kwargs,
    )

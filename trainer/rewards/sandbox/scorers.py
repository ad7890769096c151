"""`make_scorer`: the reward scorer a run's `reward` config asks for, a built-in or custom
function in a `SandboxPool` (the default) or, for trusted code, in this process."""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

from trainer.rewards.builtins import BUILTIN_REWARDS, builtin_source
from trainer.rewards.contract import RewardScorer
from trainer.rewards.inprocess import InProcessScorer
from trainer.rewards.loader import RewardCodeError, load_reward, read_reward_file
from trainer.rewards.sandbox.limits import SandboxLimits
from trainer.rewards.sandbox.pool import SandboxPool

if TYPE_CHECKING:
    from trainer.config.schema import RewardConfig

logger = logging.getLogger(__name__)


def make_scorer(
    cfg: RewardConfig,
    *,
    workers: int | None = None,
    limits: SandboxLimits | None = None,
    require_full_isolation: bool | None = None,
) -> RewardScorer:
    """The scorer ``reward`` config asks for: a built-in or custom function, run in a
    `SandboxPool` (the default), or in-process for ``executor="inprocess"`` (trusted
    code only: logged as a warning)."""
    if cfg.function == "custom":
        if not cfg.custom_path:
            raise RewardCodeError("reward.function='custom' needs reward.custom_path")
        code, name, filename = read_reward_file(cfg.custom_path), cfg.custom_name, cfg.custom_path
    elif cfg.function in BUILTIN_REWARDS:
        code, name, filename = builtin_source(cfg.function), "compute_score", "reward.py"
    else:
        raise RewardCodeError(
            f"reward.function={cfg.function!r} is not a built-in; choose one of "
            f"{', '.join(BUILTIN_REWARDS)} or 'custom' with reward.custom_path"
        )
    if cfg.executor == "inprocess":
        logger.warning(
            "reward.executor='inprocess': reward %r runs in this process, unsandboxed "
            "(trusted code only)",
            cfg.custom_path if cfg.function == "custom" else cfg.function,
        )
        if cfg.function != "custom":
            return InProcessScorer(BUILTIN_REWARDS[cfg.function], kwargs=cfg.kwargs)
        loaded = load_reward(code, name, filename=filename)
        return InProcessScorer(loaded.fn, loaded.batch_fn, kwargs=cfg.kwargs)
    count = workers if workers is not None else max(1, min(2, os.cpu_count() or 1))
    return SandboxPool(
        code,
        name,
        count,
        limits,
        require_full_isolation=require_full_isolation,
        filename=filename,
        kwargs=cfg.kwargs,
    )

"""`make_scorer`: the reward scorer a run's `reward` config asks for, a built-in or custom
function in a `SandboxPool` (the default) or, for trusted code, in this process."""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from trainer.rewards.builtins import BUILTIN_REWARDS, builtin_source
from trainer.rewards.by_data_source import DataSourceScorer
from trainer.rewards.contract import RewardScorer
from trainer.rewards.inprocess import InProcessScorer
from trainer.rewards.loader import RewardCodeError, load_reward, read_reward_file
from trainer.rewards.sandbox.limits import SandboxLimits
from trainer.rewards.sandbox.pool import SandboxPool
from trainer.rewards.templates import verl_code

if TYPE_CHECKING:
    from trainer.config.schema import RewardConfig

logger = logging.getLogger(__name__)

# Our built-ins are pure functions of one row, so the sandbox scores a chunk of rows in
# one hardened fork (the batch form) instead of a fork per row: the same results for
# 0.215 ms of CPU a row instead of 3.81 (`arith`, bench/reward_sandbox.py; docs/rewards.md,
# "Built-ins in the sandbox"). A row that raises or hangs fails its chunk, which is then
# scored row by row, as for any batch function. verl_code keeps a fork per row: each row
# runs programs under limits sized for one row (`limits_for`).
BUILTIN_BATCH_FORM = """

def compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos, **kwargs):
    return [
        compute_score(
            data_source=data_source,
            solution_str=solution_str,
            ground_truth=ground_truth,
            extra_info=extra_info,
            **kwargs,
        )
        for data_source, solution_str, ground_truth, extra_info in zip(
            data_sources, solution_strs, ground_truths, extra_infos
        )
    ]
"""
ROW_BY_ROW_BUILTINS = frozenset({"verl_code"})


def builtin_sandbox_source(function: str) -> str:
    """What a built-in's sandbox runs: its template, with the batch form added unless the
    built-in is scored a row per fork."""
    code = builtin_source(function)
    return code if function in ROW_BY_ROW_BUILTINS else code + BUILTIN_BATCH_FORM


def make_scorer(
    cfg: RewardConfig,
    *,
    workers: int | None = None,
    limits: SandboxLimits | None = None,
    require_full_isolation: bool | None = None,
) -> RewardScorer:
    """The scorer ``reward`` config asks for: a built-in or custom function, or with no
    function chosen the built-in each row's data source resolves to (`DataSourceScorer`);
    run in a `SandboxPool` (the default), or in-process for ``executor="inprocess"``
    (trusted code only: logged as a warning)."""
    count = workers if workers is not None else max(1, min(2, os.cpu_count() or 1))

    def scorer_of(function: str) -> RewardScorer:
        if function == "custom":
            if not cfg.custom_path:
                raise RewardCodeError("reward.function='custom' needs reward.custom_path")
            code = read_reward_file(cfg.custom_path)
            name, filename = cfg.custom_name, cfg.custom_path
        elif function in BUILTIN_REWARDS:
            code, name, filename = builtin_sandbox_source(function), "compute_score", "reward.py"
        else:
            raise RewardCodeError(
                f"reward.function={function!r} is not a built-in; choose one of "
                f"{', '.join(BUILTIN_REWARDS)} or 'custom' with reward.custom_path"
            )
        if cfg.executor == "inprocess":
            logger.warning(
                "reward.executor='inprocess': reward %r runs in this process, unsandboxed "
                "(trusted code only)",
                cfg.custom_path if function == "custom" else function,
            )
            if function != "custom":
                return InProcessScorer(BUILTIN_REWARDS[function], kwargs=cfg.kwargs)
            loaded = load_reward(code, name, filename=filename)
            return InProcessScorer(loaded.fn, loaded.batch_fn, kwargs=cfg.kwargs)
        return SandboxPool(
            code,
            name,
            count,
            limits_for(function, limits, cfg.kwargs),
            require_full_isolation=require_full_isolation,
            filename=filename,
            kwargs=cfg.kwargs,
        )

    if cfg.function is None:
        return DataSourceScorer(scorer_of)
    return scorer_of(cfg.function)


def limits_for(
    function: str, limits: SandboxLimits | None, kwargs: Mapping[str, Any]
) -> SandboxLimits | None:
    """The sandbox limits of a built-in: `verl_code` runs a program per test case, so a
    call may take its worst case (a whole run, then ten lone test cases) and hold
    ``max_concurrent`` programs of ``memory_limit_mb`` each; the limits grow to fit."""
    if function != "verl_code":
        return limits
    base = limits or SandboxLimits()
    try:
        timeout_s, memory_mb = verl_code.sandbox_limits(dict(kwargs))
    except (TypeError, ValueError) as exc:
        raise RewardCodeError(f"reward.kwargs for verl_code: {exc}") from None
    return dataclasses.replace(
        base,
        timeout_s=max(base.timeout_s, timeout_s),
        memory_mb=max(base.memory_mb, memory_mb),
    )

"""Load a reward function from a code string or a file, and check it before use.

`check_source` is static (no user code runs): size, syntax, and that the named
function is defined at module level. `load_reward` executes the code in this process
and is for trusted code only; untrusted code goes through `SandboxPool`, whose
sandboxed child calls `bind_reward` itself.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainer.rewards.errors import RewardCodeError
from trainer.rewards.signature import (
    BATCH_ARGS,
    SINGLE_ARGS,
    batch_name_for,
    describe_exception,
    find_reward,
)

__all__ = [
    "BATCH_ARGS",
    "MAX_SOURCE_BYTES",
    "SINGLE_ARGS",
    "LoadedReward",
    "RewardCodeError",
    "SourceInfo",
    "bind_reward",
    "check_source",
    "describe_exception",
    "load_reward",
    "load_reward_file",
    "read_reward_file",
]

MAX_SOURCE_BYTES = 64 * 1024


@dataclass(frozen=True)
class SourceInfo:
    """What a static read of the code found."""

    function_name: str
    # `<function>_batch` when the module defines it; a batch signature on the function
    # itself (verl's batch form) is found when the code is loaded (`signature.find_reward`)
    batch_name: str | None
    imports: tuple[str, ...]  # top-level module names the code imports


@dataclass(frozen=True)
class LoadedReward:
    name: str
    fn: Callable[..., Any] | None  # per-sample form
    batch_fn: Callable[..., Any] | None  # batch form, preferred when present


def check_source(
    code: str, function_name: str = "compute_score", filename: str = "reward.py"
) -> SourceInfo:
    """Static checks; raises `RewardCodeError` with a line number where there is one."""
    size = len(code.encode("utf-8", errors="surrogatepass"))
    if size > MAX_SOURCE_BYTES:
        raise RewardCodeError(
            f"reward code is {size} bytes; the limit is {MAX_SOURCE_BYTES} bytes (64 KiB)"
        )
    if not function_name.isidentifier():
        raise RewardCodeError(f"function name {function_name!r} is not a Python identifier")
    try:
        tree = ast.parse(code, filename=filename)
    except SyntaxError as exc:
        where = f"line {exc.lineno}" + (f", column {exc.offset}" if exc.offset else "")
        text = f": {exc.text.strip()}" if exc.text and exc.text.strip() else ""
        raise RewardCodeError(f"syntax error at {where}: {exc.msg}{text}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise RewardCodeError(f"reward code cannot be parsed: {exc}") from None
    defined = _module_level_names(tree)
    batch = batch_name_for(function_name)
    if function_name not in defined and batch not in defined:
        found = sorted(n for n in defined if not n.startswith("_"))
        raise RewardCodeError(
            f"no function named {function_name!r} at module level; define "
            f"`def {function_name}(data_source, solution_str, ground_truth, extra_info, **kw)`"
            + (f" (found: {', '.join(found[:10])})" if found else "")
        )
    async_defs = {n.name for n in tree.body if isinstance(n, ast.AsyncFunctionDef)}
    for name in (function_name, batch):
        if name in async_defs:
            raise RewardCodeError(f"{name!r} is `async def`; reward functions must be plain def")
    return SourceInfo(
        function_name=function_name,
        batch_name=batch if batch in defined else None,
        imports=_imported_modules(tree),
    )


def _module_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _imported_modules(tree: ast.Module) -> tuple[str, ...]:
    """Absolute imports anywhere in the code (the sandbox preloads trusted ones)."""
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append(node.module)
            found.extend(f"{node.module}.{a.name}" for a in node.names if a.name != "*")
    return tuple(dict.fromkeys(found))


def bind_reward(namespace: dict[str, Any], function_name: str) -> LoadedReward:
    """Find the function(s) in an executed module namespace and check their signatures."""
    fn, batch_fn = find_reward(namespace, function_name)
    return LoadedReward(name=function_name, fn=fn, batch_fn=batch_fn)


def load_reward(
    code: str, function_name: str = "compute_score", filename: str = "reward.py"
) -> LoadedReward:
    """Check and execute trusted code in this process; returns its reward function(s)."""
    check_source(code, function_name, filename)
    namespace: dict[str, Any] = {"__name__": "reward_module", "__file__": filename}
    try:
        exec(compile(code, filename, "exec"), namespace)
    except Exception as exc:
        raise RewardCodeError(
            f"the reward code raised while loading: {describe_exception(exc, filename)}"
        ) from exc
    return bind_reward(namespace, function_name)


def read_reward_file(path: str | Path) -> str:
    file = Path(path)
    try:
        size = file.stat().st_size
    except OSError as exc:
        raise RewardCodeError(f"cannot read reward file {str(file)!r}: {exc.strerror}") from None
    if size > MAX_SOURCE_BYTES:
        raise RewardCodeError(
            f"reward file {str(file)!r} is {size} bytes; the limit is {MAX_SOURCE_BYTES} bytes"
        )
    try:
        return file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RewardCodeError(f"cannot read reward file {str(file)!r}: {exc}") from None


def load_reward_file(path: str | Path, function_name: str = "compute_score") -> LoadedReward:
    """`load_reward` for a file (trusted code only)."""
    return load_reward(read_reward_file(path), function_name, filename=str(path))

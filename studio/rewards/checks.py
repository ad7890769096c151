"""Problems in reward code found without running it, each addressed to a line.

The trainer's `check_source` decides what is refused (size, syntax, the function,
`async def`) and says it in words; this module adds where: the line and column a
browser editor puts its marker on. It also checks what the sandbox would only find
when loading the code: that the entry point can be called the way verl calls it
(`compute_score(data_source=..., solution_str=..., ground_truth=..., extra_info=...)`,
or with the four lists of verl's batch form).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Literal

from trainer.rewards import RewardCodeError, check_source
from trainer.rewards.signature import BATCH_ARGS, SINGLE_ARGS, batch_name_for, is_batch_form

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Problem:
    """One problem; lines and columns are 1-based, as editors show them."""

    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    severity: Severity = "error"


def problems_in(code: str, entrypoint: str = "compute_score") -> list[Problem]:
    """Every problem that would make saving (or loading) the code fail; empty when none."""
    try:
        check_source(code, entrypoint)
    except RewardCodeError as exc:
        return [_located(code, entrypoint, str(exc))]
    tree = ast.parse(code)  # check_source parsed it already
    return _signature_problems(tree, entrypoint)


def _located(code: str, entrypoint: str, message: str) -> Problem:
    """The trainer's message at the line it names (a syntax error) or at line 1."""
    try:
        ast.parse(code)
    except SyntaxError as exc:
        line = max(1, exc.lineno or 1)
        column = max(1, exc.offset or 1)
        end_line = exc.end_lineno if exc.end_lineno and exc.end_lineno >= line else line
        end_column = exc.end_offset if exc.end_offset and end_line > line else column + 1
        return Problem(line, column, end_line, max(end_column, column + 1), message)
    except (ValueError, RecursionError, MemoryError):
        pass
    else:
        async_def = _module_function(ast.parse(code), entrypoint, async_only=True)
        if async_def is not None:
            return _at_def(async_def, message)
    return Problem(1, 1, 1, 2, message)


def _module_function(
    tree: ast.Module, name: str, async_only: bool = False
) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    found: ast.FunctionDef | ast.AsyncFunctionDef | None = None
    for node in tree.body:  # the last definition wins, as when Python runs the module
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if async_only and not isinstance(node, ast.AsyncFunctionDef):
            continue
        if node.name in (name, batch_name_for(name)):
            found = node
    return found


def _at_def(node: ast.FunctionDef | ast.AsyncFunctionDef, message: str) -> Problem:
    end = node.col_offset + len("async def " if isinstance(node, ast.AsyncFunctionDef) else "def ")
    return Problem(node.lineno, node.col_offset + 1, node.lineno, end + len(node.name) + 1, message)


def _signature_problems(tree: ast.Module, entrypoint: str) -> list[Problem]:
    """The entry point must take verl's four arguments by keyword, or, in verl's batch
    form (`is_batch_form`: it names the plural arguments), the four lists; so must a
    ``<entrypoint>_batch`` beside it. Nothing else may be required."""
    problems: list[Problem] = []
    batch_name = batch_name_for(entrypoint)
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or node.name not in (entrypoint, batch_name):
            continue
        named = [a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)]
        batch = node.name == batch_name or is_batch_form(named)
        expected = BATCH_ARGS if batch else SINGLE_ARGS
        missing = _unbindable_keywords(node.args, expected)
        if missing:
            problems.append(
                _at_def(
                    node,
                    f"`{node.name}` can't be called the way verl calls it: it takes no "
                    f"argument named {', '.join(repr(m) for m in missing)}; use "
                    f"`def {node.name}({', '.join(expected)}, **kwargs)`"
                    + (" (verl's batch form: each argument is a list)" if batch else ""),
                )
            )
        extra = _required_extras(node.args, expected)
        if extra:
            problems.append(
                _at_def(
                    node,
                    f"`{node.name}` requires argument(s) verl never passes: "
                    f"{', '.join(extra)}; give them defaults",
                )
            )
    return problems


def _unbindable_keywords(args: ast.arguments, expected: tuple[str, ...]) -> list[str]:
    positional_only = {a.arg for a in args.posonlyargs}
    by_keyword = {a.arg for a in (*args.args, *args.kwonlyargs)}
    return [
        name
        for name in expected
        if name in positional_only or (args.kwarg is None and name not in by_keyword)
    ]


def _required_extras(args: ast.arguments, expected: tuple[str, ...]) -> list[str]:
    positional = [*args.posonlyargs, *args.args]
    without_default = positional[: len(positional) - len(args.defaults)]
    required = [a.arg for a in without_default]
    required += [
        a.arg
        for a, default in zip(args.kwonlyargs, args.kw_defaults, strict=True)
        if default is None
    ]
    return [name for name in required if name not in expected]

"""Input files of the remote commands (a config tree, pasted completions), read with
errors that name the file and line; a problem is a `UsageError` (exit status 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class UsageError(Exception):
    """A problem with the command line or an input file (exit 2)."""


def read_tree(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"can't read {path}: {exc.strerror}") from None
    try:
        if path.suffix in (".yaml", ".yml"):
            import yaml

            tree = yaml.safe_load(text)
        else:
            tree = json.loads(text)
    except ValueError as exc:  # json.JSONDecodeError and yaml.YAMLError's parse errors
        raise UsageError(f"{path} is not valid {path.suffix[1:] or 'JSON'}: {exc}") from None
    except RecursionError:  # both decoders recurse once per level; the studio bounds it
        raise UsageError(f"{path} is nested too deeply") from None
    if not isinstance(tree, dict):
        raise UsageError(f"{path} must hold a mapping of config sections, not {type(tree)}")
    return tree


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"can't read {path}: {exc}") from None
    rows: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{path}:{number}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise UsageError(f"{path}:{number}: expected an object with solution_str")
        rows.append(row)
    if not rows:
        raise UsageError(f"{path} has no completions")
    return rows

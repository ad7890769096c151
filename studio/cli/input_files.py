"""Input files of the remote commands (a config tree, pasted completions), read with
errors that name the file and line; a problem is a `UsageError` (exit status 2)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def add_config_and_input_arguments(parser: argparse.ArgumentParser, set_help: str) -> None:
    """A run's config edits (--config, --set) and its input ids (--model, --dataset, ...),
    as `runs create` and `sweeps create` take them."""
    parser.add_argument("--config", type=Path, help="a partial config tree, JSON or YAML file")
    parser.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE", help=set_help
    )
    parser.add_argument("--model", type=int, help="model id (default: the preset's demo model)")
    parser.add_argument("--dataset", type=int, help="dataset id: its latest version")
    parser.add_argument("--dataset-version", type=int, help="dataset version id")
    parser.add_argument(
        "--validation",
        choices=["held_out", "dataset_version", "none"],
        help="held-out rows of the training version (default), another version, or none",
    )
    parser.add_argument("--validation-version", type=int, help="with --validation dataset_version")
    parser.add_argument("--reward-version", type=int, help="reward version id")


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

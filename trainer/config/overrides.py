"""YAML files plus dotted `key=value` overrides, turned into a validated RunConfig."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from trainer.config.schema import RunConfig
from trainer.config.tree_bounds import tree_problem


@dataclass(frozen=True)
class ConfigIssue:
    """One problem at one dotted config path ("" for a rule that spans several fields)."""

    path: str
    message: str
    kind: str  # pydantic's error type, e.g. "greater_than" or "extra_forbidden"


class ConfigError(ValueError):
    """A config that cannot be used; the message names the field and the fix.

    `issues` lists the per-field problems when schema validation failed (empty
    otherwise), so an API can point a form at each field.
    """

    def __init__(self, message: str, issues: Sequence[ConfigIssue] = ()) -> None:
        super().__init__(message)
        self.issues = tuple(issues)


def parse_value(text: str) -> Any:
    """`lr=1e-5` -> 1e-05, `stop=[a,b]` -> ['a','b'], `x=null` -> None, as YAML reads them."""
    try:
        return yaml.safe_load(text) if text != "" else ""
    except yaml.YAMLError:
        return text
    except RecursionError:  # PyYAML composes nested values recursively
        raise ConfigError(f"the override value {text[:40]!r}... is nested too deeply") from None


def check_tree(tree: Any, what: str) -> None:
    """ConfigError when `tree` (`what`: "the config", a file's name) is too deep or too
    large (trainer.config.tree_bounds), before anything copies, merges or validates it."""
    problem = tree_problem(tree)
    if problem:
        message = f"{what} {problem}"
        raise ConfigError(message, [ConfigIssue("", message, "too_large")])


def set_dotted(tree: dict[str, Any], dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    node = tree
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"cannot set {dotted!r}: {part!r} is a value, not a section")
        node = child
    node[parts[-1]] = value


def split_override(item: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    key = key.strip().lstrip("+")  # accept Hydra's `+key=value` form
    if not sep or not key:
        raise ConfigError(f"override {item!r} is not of the form key=value")
    return key, value


def format_validation_error(error: ValidationError) -> str:
    lines = []
    for issue in error.errors():
        message = issue["msg"].removeprefix("Value error, ")
        where = ".".join(str(p) for p in issue["loc"])
        lines.append(f"{where}: {message}" if where else message)
    return "; ".join(lines)


def config_issues(error: ValidationError) -> list[ConfigIssue]:
    return [
        ConfigIssue(
            path=".".join(str(p) for p in issue["loc"]),
            message=issue["msg"].removeprefix("Value error, "),
            kind=issue["type"],
        )
        for issue in error.errors()
    ]


def build_config(tree: dict[str, Any]) -> RunConfig:
    check_tree(tree, "the config")
    try:
        return RunConfig.model_validate(tree)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc), config_issues(exc)) from exc


def load_yaml(path: str | Path) -> dict[str, Any]:
    text = Path(path).read_text()
    try:
        data = yaml.safe_load(text) or {}
    except RecursionError:  # PyYAML composes nested values recursively
        raise ConfigError(f"{path} is nested too deeply") from None
    check_tree(data, str(path))
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of sections")
    return data

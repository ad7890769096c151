"""Refusing paths in a config that comes from outside (the studio's requests).

Everything here is derived from the path types (trainer.config.paths), so a new
path-bearing field is refused as soon as it is declared with one of them.
"""

from __future__ import annotations

from typing import Any

from trainer.config.overrides import ConfigError, ConfigIssue
from trainer.config.paths import PathKind, path_fields, path_values
from trainer.config.verl_tools import MT

# verl keys whose value is a file that the translation would read.
VERL_FILE_KEYS = {f"{MT}.tool_config_path": "rollout.multi_turn.environment"}

# What a studio user chooses instead of each kind of path.
INSTEAD: dict[str, str] = {
    "model": "choose the run's model with `model` (a model of the project, /api/models/)",
    "dataset": "choose the training data with `dataset` or `dataset_version` (/api/datasets/)",
    "validation": "choose validation data with `validation` (held-out rows of the training "
    "version, another dataset version, or none)",
    "reward": "choose a reward function version with `reward_version` (/api/rewards/)",
    "reward_model": "choose reward models with `reward_models` (models of the project)",
    "run_folder": "the studio keeps it in the run's own folder",
}


def refusal(kind: PathKind) -> str:
    what = "a file, folder or URL" if kind.url else "a file or folder"
    return f"Names {what} on the server, which a request may not do; {INSTEAD[kind.resource]}."


def path_issues(tree: dict[str, Any]) -> list[ConfigIssue]:
    """One issue per path-bearing field that `tree` sets (to anything but null or [])."""
    issues = []
    for field in path_fields():
        for where, value in path_values(tree, field.steps):
            if value is None or value == []:
                continue  # clearing a path names nothing
            issues.append(ConfigIssue(where, refusal(field.kind), "server_path"))
    return issues


def refuse_paths(tree: dict[str, Any]) -> None:
    issues = path_issues(tree)
    if issues:
        raise ConfigError("; ".join(f"{i.path}: {i.message}" for i in issues), issues)


def refuse_file_keys(verl_keys: list[str]) -> None:
    """verl keys that would make the translator read a file, refused before it does."""
    issues = [
        ConfigIssue(
            key,
            "Names a file on the server, which a request may not do; set "
            f"`{VERL_FILE_KEYS[key]}` to a built-in environment instead.",
            "server_path",
        )
        for key in verl_keys
        if key in VERL_FILE_KEYS
    ]
    if issues:
        raise ConfigError("; ".join(f"{i.path}: {i.message}" for i in issues), issues)

"""The run config: schema, loading from YAML + overrides, verl translation, presets."""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from trainer.config.overrides import (
    ConfigError,
    ConfigIssue,
    build_config,
    check_tree,
    load_yaml,
    parse_value,
    set_dotted,
    split_override,
)
from trainer.config.path_refusal import refuse_file_keys, refuse_paths
from trainer.config.presets import PRESETS, preset_names
from trainer.config.renamed_keys import RenamedKey, move_renamed, renamed_override
from trainer.config.schema import RunConfig
from trainer.config.verl import (
    VERL_KEY_MAP,
    VERL_TIES,
    IgnoredKey,
    is_verl_key,
    same_name_value,
    translate_verl,
)

__all__ = [
    "PRESETS",
    "VERL_KEY_MAP",
    "Composed",
    "ConfigError",
    "ConfigIssue",
    "ConfigRefusals",
    "IgnoredKey",
    "RenamedKey",
    "RunConfig",
    "build_config",
    "compose",
    "compose_tree",
    "deep_merge",
    "join_problems",
    "load_config",
    "preset_names",
    "schema_paths",
]


def schema_paths(model: type[BaseModel] = RunConfig, prefix: str = "") -> set[str]:
    """Every dotted leaf path of the schema, e.g. 'actor.optim.lr'."""
    paths: set[str] = set()
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            paths |= schema_paths(annotation, f"{prefix}{name}.")
        else:
            paths.add(f"{prefix}{name}")
    return paths


def deep_merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def load_config(
    path: str | Path | None = None,
    overrides: list[str] | None = None,
    preset: str | None = None,
    base: dict[str, Any] | None = None,
) -> RunConfig:
    """Defaults <- preset <- base tree <- YAML file <- dotted overrides (ours or verl's)."""
    return build_config(compose_tree(path, overrides, preset, base))


@dataclass(frozen=True)
class Composed:
    tree: dict[str, Any]  # not yet validated
    ignored: tuple[IgnoredKey, ...]  # verl overrides accepted with no effect, and why
    renamed: tuple[RenamedKey, ...] = ()  # moved keys read under their old spelling


def compose_tree(
    path: str | Path | None = None,
    overrides: list[str] | None = None,
    preset: str | None = None,
    base: dict[str, Any] | None = None,
    stored: dict[str, Any] | None = None,
    server_paths: bool = True,
) -> dict[str, Any]:
    """`compose(...).tree`."""
    return compose(path, overrides, preset, base, stored, server_paths).tree


def compose(
    path: str | Path | None = None,
    overrides: list[str] | None = None,
    preset: str | None = None,
    base: dict[str, Any] | None = None,
    stored: dict[str, Any] | None = None,
    server_paths: bool = True,
) -> Composed:
    """The config tree, not yet validated: preset <- `stored` <- base tree <- YAML file
    <- dotted overrides (ours or verl's), and the verl overrides it ignored.

    `server_paths=False` is for requests from outside (the studio): a field that names a
    file, folder or URL (trainer.config.paths) may not be set by `base`, the file or the
    overrides, and verl's file-reading keys are refused before anything is read.
    `stored` is trusted (a config the studio stored), so it may hold paths.
    Every part is bounded in depth and size (trainer.config.tree_bounds) before it is
    copied or merged.
    """
    check_tree(stored, "the stored config")
    check_tree(base, "the config")
    tree: dict[str, Any] = {}
    if preset is not None:
        if preset not in PRESETS:
            raise ConfigError(f"unknown preset {preset!r}; choose one of {preset_names()}")
        tree = deep_merge(tree, PRESETS[preset])
    renamed: list[RenamedKey] = []
    if stored:
        stored = copy.deepcopy(stored)
        renamed += move_renamed(stored, "the stored config")
        tree = deep_merge(tree, stored)
    requested = copy.deepcopy(base or {})
    renamed += move_renamed(requested, "the config")
    if path is not None:
        from_file = load_yaml(path)
        renamed += move_renamed(from_file, f"the config file {path}")
        requested = deep_merge(requested, from_file)
    ours = schema_paths()
    verl_pairs: list[tuple[str, Any]] = []
    pairs: list[tuple[str, Any]] = []
    # Every problem is collected before any is raised, so one answer names them all.
    problems: list[str] = []
    for item in overrides or []:
        key, raw = split_override(item)
        key, moved = renamed_override(key, raw)
        if moved is not None:
            renamed.append(moved)
        if key in ours:
            pairs.append((key, same_name_value(key, parse_value(raw))))
        elif is_verl_key(key):
            verl_pairs.append((key, parse_value(raw)))
        else:
            problems.append(
                f"unknown config key {key!r}; see docs/config.md for the fields "
                "(verl-style keys are translated, see docs/from-verl.md)"
            )
    if not server_paths:
        if problems:  # unknown keys are named before any file key is looked at
            raise ConfigRefusals(problems, tree)
        refuse_file_keys(verl_pairs)  # its own error: each field's issue, for the forms
    verl = translate_verl(verl_pairs)
    problems += [f"verl override {r}" for r in verl.refused]
    if verl.unknown:
        problems.append(
            "these verl overrides have no RL Studio equivalent: " + ", ".join(verl.unknown)
        )
    for key, value in [*pairs, *verl.pairs]:
        try:
            set_dotted(requested, key, value)
        except ConfigError as exc:
            problems.append(str(exc))
    check_tree(requested, "the config")  # dotted keys and override values nest too
    if not server_paths:
        refuse_paths(requested)
    merged = deep_merge(tree, requested)
    if any(key == "critic.model.path" for key, _ in pairs):
        # A command line that names the critic's model is verl's PPO with GAE, verl's
        # default estimator (ours is grpo), unless something chose an estimator.
        merged.setdefault("algorithm", {}).setdefault("adv_estimator", "gae")
    for key, value in verl.ties:
        try:
            _check_tie(merged, key, value)
        except ConfigError as exc:
            problems.append(str(exc))
    if problems:
        raise ConfigRefusals(problems, merged)
    return Composed(merged, tuple(verl.ignored), tuple(renamed))


class ConfigRefusals(ConfigError):
    """Every problem of one config's parts, found before validation; `tree` is the config
    composed from the parts that had none (so validation can name its problems too)."""

    def __init__(self, problems: list[str], tree: dict[str, Any]) -> None:
        super().__init__(join_problems(problems))
        self.problems = list(problems)
        self.tree = tree


def join_problems(problems: list[str]) -> str:
    """One message for one problem or several (each on its own line)."""
    if len(problems) == 1:
        verl = problems[0].startswith(("verl override", "these verl overrides"))
        more = " (see docs/from-verl.md)" if verl and "docs/from-verl.md" not in problems[0] else ""
        return problems[0] + more
    listed = "\n".join(f"  - {p}" for p in problems)
    return f"{len(problems)} problems (see docs/from-verl.md for verl's keys):\n{listed}"


def _tree_value(tree: dict[str, Any], dotted: str) -> Any:
    """The value at `dotted` in `tree`, or RunConfig's default when the tree has none."""
    node: Any = tree
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            value: Any = RunConfig()
            for attr in dotted.split("."):
                value = getattr(value, attr)
            return value
        node = node[part]
    return node


def _check_tie(tree: dict[str, Any], key: str, value: Any) -> None:
    """A verl key accepted only when it equals our setting of the same thing."""
    target = VERL_KEY_MAP[key]
    ours = _tree_value(tree, target)
    same = value == ours
    if isinstance(value, str) and isinstance(ours, str):  # the same folder, spelled twice
        same = os.path.normpath(os.path.expanduser(value)) == os.path.normpath(
            os.path.expanduser(ours)
        )
    if not same:
        raise ConfigError(
            f"verl override {key}={value!r} differs from {target}={ours!r}: {VERL_TIES[key]} "
            "(see docs/from-verl.md)"
        )

"""verl's `--config-path` / `--config-name`: the YAML a verl command line starts from.

verl composes its trainer config with Hydra: `--config-name` names a YAML file in
`--config-path` (a folder; verl's own `config` is verl/trainer/config, beside
verl/trainer/main_ppo.py). A user's file lists verl's trainer config in its `defaults`
and sets keys on top of it; the command line's overrides then apply on top of the file.

RL Studio reads the file the same way: its keys become overrides typed before the
command line's own (`ConfigFile.overrides`), so each is classified, translated, ignored
or refused like a typed key, and a typed key wins over the file's. The file's `defaults`
must name verl's PPO trainer config: `ppo_trainer` is verl's defaults, which the
translation already stands for (a line without `--config-name` starts from them), so it
adds no key; `ppo_megatron_trainer` is Megatron-LM training and is refused; any other
default (another file of the user's) is refused by name, since only one file is read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainer.config.overrides import ConfigError, check_tree
from trainer.config.verl_rule_parts import FSDP2_ONLY

# verl's own trainer configs (verl/trainer/config/<name>.yaml), by what RL Studio does.
VERL_DEFAULTS = "ppo_trainer"
VERL_REFUSED_CONFIGS: dict[str, str] = {
    "ppo_megatron_trainer": f"verl's Megatron-LM trainer config: {FSDP2_ONLY}",
    "ppo_veomni_trainer": f"verl's VeOmni trainer config: {FSDP2_ONLY}",
    "ppo_torchtitan_trainer": f"verl's TorchTitan trainer config: {FSDP2_ONLY}",
}
# The folder verl's `--config-path=config` names (Hydra resolves it beside main_ppo.py).
VERL_CONFIG_FOLDERS = ("config", "./config", "verl/trainer/config", "./verl/trainer/config")
_HYDRA_ONLY = ("hydra", "defaults")  # Hydra's own sections: how to compose, not settings


@dataclass
class ConfigFile:
    """What a `--config-path/--config-name` pair adds to a command line."""

    where: str  # as typed: "--config-path=... --config-name=..."
    file: str = ""  # the file's name, when one was read
    overrides: list[str] = field(default_factory=list)  # the file's keys, as key=value
    refused: list[str] = field(default_factory=list)  # "what: why"


def _leaves(tree: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in tree.items():
        if isinstance(value, dict) and value:
            out += _leaves(value, f"{prefix}{key}.")
        else:
            out.append((f"{prefix}{key}", value))
    return out


def _default_names(defaults: Any) -> list[str]:
    names = []
    for entry in defaults if isinstance(defaults, list) else [defaults]:
        if isinstance(entry, dict):  # `- group: option` picks one file of a group
            names += [f"{group}: {option}" for group, option in entry.items()]
        else:
            names.append(str(entry))
    return names


def read_config_file(config_path: str | None, config_name: str | None) -> ConfigFile:
    """The overrides and refusals of verl's `--config-path`/`--config-name` (a relative
    path is read from the current folder, as verl's scripts run from verl's root)."""
    where = " ".join(
        f"--config-{kind}={value}"
        for kind, value in (("path", config_path), ("name", config_name))
        if value is not None
    )
    out = ConfigFile(where)
    if config_name is None:
        return out  # a folder without a file changes nothing
    name = config_name.removesuffix(".yaml")
    folder = Path(config_path or "config").expanduser()
    file = folder / f"{name}.yaml"
    if not file.is_file() and (config_path or "config") in VERL_CONFIG_FOLDERS:
        if name == VERL_DEFAULTS:
            return out
        if name in VERL_REFUSED_CONFIGS:
            out.refused.append(f"--config-name={config_name}: {VERL_REFUSED_CONFIGS[name]}")
            return out
    if not file.is_file():
        raise ConfigError(
            f"{where}: no file {file} (verl's own trainer config is `--config-path=config "
            f"--config-name={VERL_DEFAULTS}`; another is read from the current folder)"
        )
    try:
        tree = json.loads(json.dumps(_load(file)))  # plain values only
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {file} holds a value YAML cannot spell plainly") from exc
    for default in _default_names(tree.get("defaults", [VERL_DEFAULTS])):
        if default in (VERL_DEFAULTS, "_self_"):
            continue
        reason = VERL_REFUSED_CONFIGS.get(
            default,
            f"only verl's {VERL_DEFAULTS} can be composed under a config file here; "
            "put its keys on the command line",
        )
        out.refused.append(f"{file.name}: defaults names {default}: {reason}")
    out.file = file.name
    for key, value in _leaves({k: v for k, v in tree.items() if k not in _HYDRA_ONLY}):
        out.overrides.append(f"{key}={json.dumps(value)}")
    return out


def from_the_file(problems: list[str], config: ConfigFile, typed: list[str]) -> list[str]:
    """`problems`, each that names a key only the file sets marked with the file's name
    (a refusal names the key as the file spells it, and where it is)."""
    typed_keys = {item.partition("=")[0].lstrip("+") for item in typed}
    mine = [
        item.partition("=")[0]
        for item in config.overrides
        if item.partition("=")[0] not in typed_keys
    ]
    out = []
    for problem in problems:
        named = any(problem.startswith((f"verl override {k}=", f"{k}=")) for k in mine)
        out.append(f"{problem} (in {config.file})" if named else problem)
    return out


def _load(file: Path) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(file.read_text()) or {}
    except RecursionError:  # PyYAML composes nested values recursively
        raise ConfigError(f"{file} is nested too deeply") from None
    check_tree(data, str(file))
    if not isinstance(data, dict):
        raise ConfigError(f"{file}: the top level must be a mapping of sections")
    return data

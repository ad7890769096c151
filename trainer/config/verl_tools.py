"""verl's multi-turn settings, translated where they map onto `rollout.multi_turn`.

verl configures tools in a YAML file (``multi_turn.tool_config_path``): a list of
``{class_name, config, tool_schema}`` entries, each tool a Python class run in the
trainer. RL Studio's tools are built-ins run in the reward sandbox, so a tool file
translates when it names one of them: verl's code interpreter
(``SandboxFusionTool`` / ``code_interpreter``) becomes the ``python`` environment and a
tool named ``calculator`` the ``calculator`` one; its ``default_timeout`` becomes
``tool_timeout_s``. Anything else is refused with the names found.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from trainer.config.overrides import ConfigError

MT = "actor_rollout_ref.rollout.multi_turn"

# verl multi_turn key -> our rollout.multi_turn key ("" = accepted, nothing to set).
VERL_MULTI_TURN_KEYS: dict[str, str] = {
    f"{MT}.enable": "rollout.multi_turn.enabled",
    f"{MT}.max_assistant_turns": "rollout.multi_turn.max_turns",
    f"{MT}.max_tool_response_length": "rollout.multi_turn.max_tool_result_chars",
    f"{MT}.max_parallel_calls": "",  # every call of a message runs (at most 16)
    f"{MT}.tool_response_truncate_side": "",  # results are cut at the end
    f"{MT}.format": "",  # checked below: only the hermes format is parsed
    f"{MT}.tool_config_path": "",  # read by `translate_tool_config`
}

_CODE_CLASSES = ("SandboxFusionTool",)
_CODE_NAMES = ("code_interpreter", "python", "code")


def _tool_environment(entry: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    schema = entry.get("tool_schema") or {}
    function = schema.get("function") or {}
    name = str(function.get("name", ""))
    class_name = str(entry.get("class_name", "")).rsplit(".", 1)[-1]
    config = entry.get("config") or {}
    if class_name in _CODE_CLASSES or name in _CODE_NAMES:
        return "python", config
    if name == "calculator":
        return "calculator", config
    raise ConfigError(
        f"verl tool {name or class_name!r} ({entry.get('class_name')}) has no RL Studio "
        "equivalent; built-in tools: calculator, python (verl's code interpreter)"
    )


def translate_tool_config(path: str | Path) -> list[tuple[str, Any]]:
    """Our (key, value) overrides for verl's tool config file at `path`."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{MT}.tool_config_path={path!s}: cannot read it: {exc}") from None
    tools = data.get("tools") if isinstance(data, dict) else None
    if not isinstance(tools, list) or len(tools) != 1:
        count = len(tools) if isinstance(tools, list) else 0
        raise ConfigError(
            f"{path}: expected a verl tool config with exactly one entry under `tools`, "
            f"found {count}; an RL Studio environment has one built-in tool"
        )
    environment, config = _tool_environment(tools[0])
    out: list[tuple[str, Any]] = [("rollout.multi_turn.environment", environment)]
    timeout = config.get("default_timeout")
    if isinstance(timeout, int | float) and timeout > 0:
        out.append(("rollout.multi_turn.tool_timeout_s", float(timeout)))
    return out


def translate_multi_turn(key: str, value: Any) -> list[tuple[str, Any]]:
    """Our overrides for one verl ``multi_turn`` key (which must be in the map)."""
    if key == f"{MT}.format" and str(value) != "hermes":
        raise ConfigError(f"{key}={value!r}: only the 'hermes' tool-call format is parsed")
    if key == f"{MT}.tool_config_path":
        return translate_tool_config(value)
    target = VERL_MULTI_TURN_KEYS[key]
    return [(target, value)] if target else []

"""verl's multi-turn settings, translated where they map onto `rollout.multi_turn`.

verl configures tools in a YAML file (``multi_turn.tool_config_path``): a list of
``{class_name, config, tool_schema}`` entries, each tool a Python class run in the
trainer. RL Studio's tools are built-ins, so a tool file translates when it names one of
them: verl's code interpreter (``SandboxFusionTool`` / ``code_interpreter``) becomes the
``python`` environment, a tool named ``calculator`` the ``calculator`` one, verl's
``Gsm8kTool`` the ``gsm8k_answer`` one and its ``SearchTool`` the ``search`` one;
``default_timeout`` / ``timeout`` become ``tool_timeout_s``. Anything else is refused
with the class named.

Interactions (``multi_turn.interaction_config_path``) are a YAML list of ``{name,
class_name, config}``; verl's ``Gsm8kInteraction`` becomes ``interaction: gsm8k``.

What a file sets that has no effect here comes back as notes (key, value, reason), which
the translation reports as ignored keys.
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
    f"{MT}.max_user_turns": "rollout.multi_turn.max_user_turns",
    f"{MT}.max_parallel_calls": "",  # every call of a message runs (at most 16)
    f"{MT}.tool_response_truncate_side": "",  # results are cut at the end
    f"{MT}.format": "",  # checked below: only the hermes format is parsed
    f"{MT}.tool_config_path": "",  # read by `translate_tool_config`
    f"{MT}.interaction_config_path": "",  # read by `translate_interaction_config`
}

Note = tuple[str, Any, str]  # (key, value, why it has no effect here)

_CODE_CLASSES = ("SandboxFusionTool",)
_CODE_NAMES = ("code_interpreter", "python", "code")
# verl class -> (our environment, the function name our tool has).
_CLASSES = {"Gsm8kTool": ("gsm8k_answer", "calc_gsm8k_reward"), "SearchTool": ("search", "search")}
_INTERACTIONS = {"Gsm8kInteraction": "gsm8k"}
RETRIEVER_SETTING = "RLSTUDIO_SEARCH_RETRIEVER_URL"
# verl's SearchTool concurrency settings (a Ray pool and a global rate limiter).
_SEARCH_POOL_KEYS = ("num_workers", "rate_limit", "enable_global_rate_limit")
# verl keeps tool and interaction rewards beside the score (`tool_rewards`,
# `turn_scores`); its reward managers do not add them, so a translated config does not.
NO_STEP_REWARDS = ("rollout.multi_turn.add_step_rewards", False)


def _read(key: str, path: str | Path) -> Any:
    try:
        return yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{key}={path!s}: cannot read it: {exc}") from None


def _one_entry(data: Any, section: str, path: str | Path, what: str) -> dict[str, Any]:
    entries = data.get(section) if isinstance(data, dict) else None
    if not isinstance(entries, list) or len(entries) != 1 or not isinstance(entries[0], dict):
        count = len(entries) if isinstance(entries, list) else 0
        raise ConfigError(
            f"{path}: expected a verl {what} config with exactly one entry under "
            f"`{section}`, found {count}; an RL Studio environment has one built-in {what}"
        )
    return entries[0]


def _tool_environment(entry: dict[str, Any]) -> tuple[str, dict[str, Any], str]:
    """(our environment, the entry's config, the function name it declares)."""
    schema = entry.get("tool_schema") or {}
    function = schema.get("function") or {}
    name = str(function.get("name", ""))
    class_name = str(entry.get("class_name", "")).rsplit(".", 1)[-1]
    config = entry.get("config") or {}
    if class_name in _CLASSES:
        return _CLASSES[class_name][0], config, name
    if class_name in _CODE_CLASSES or name in _CODE_NAMES:
        return "python", config, name
    if name == "calculator":
        return "calculator", config, name
    raise ConfigError(
        f"verl tool class {entry.get('class_name')!r} (function {name!r}) has no RL Studio "
        "equivalent; known: verl.tools.gsm8k_tool.Gsm8kTool, verl.tools.search_tool.SearchTool, "
        "SandboxFusionTool (the python environment) and a tool named calculator"
    )


def translate_tool_config(path: str | Path) -> tuple[list[tuple[str, Any]], list[Note]]:
    """Our (key, value) overrides and notes for verl's tool config file at `path`."""
    key = f"{MT}.tool_config_path"
    entry = _one_entry(_read(key, path), "tools", path, "tool")
    environment, config, name = _tool_environment(entry)
    where = f"{key} ({Path(path).name}) tools[0]"
    out: list[tuple[str, Any]] = [("rollout.multi_turn.environment", environment), NO_STEP_REWARDS]
    notes: list[Note] = []
    timeout = config.get("default_timeout", config.get("timeout"))
    if isinstance(timeout, int | float) and timeout > 0:
        out.append(("rollout.multi_turn.tool_timeout_s", float(timeout)))
    expected = dict(_CLASSES.values()).get(environment)
    if expected and name and name != expected:
        reason = f"the built-in tool is called {expected!r}, with verl's example schema"
        notes.append((f"{where}.tool_schema.function.name", name, reason))
    if environment == "search":
        if isinstance(config.get("topk"), int):
            out.append(("rollout.multi_turn.search_topk", config["topk"]))
        if "retrieval_service_url" in config:
            reason = (
                f"the trainer calls the retriever that the operator sets in {RETRIEVER_SETTING} "
                "(docs/deploy.md); a run's config names no address"
            )
            notes.append(
                (f"{where}.config.retrieval_service_url", config["retrieval_service_url"], reason)
            )
        for pool_key in _SEARCH_POOL_KEYS:
            if pool_key in config:
                reason = "the calls of one turn run at once in the trainer (at most 8 requests)"
                notes.append((f"{where}.config.{pool_key}", config[pool_key], reason))
    return out, notes


def translate_interaction_config(path: str | Path) -> list[tuple[str, Any]]:
    """Our overrides for verl's interaction config file at `path`."""
    key = f"{MT}.interaction_config_path"
    entry = _one_entry(_read(key, path), "interaction", path, "interaction")
    class_name = str(entry.get("class_name", ""))
    ours = _INTERACTIONS.get(class_name.rsplit(".", 1)[-1])
    if ours is None:
        raise ConfigError(
            f"verl interaction class {class_name!r} (name {entry.get('name')!r}) has no RL "
            "Studio equivalent; known: verl.interactions.gsm8k_interaction.Gsm8kInteraction"
        )
    # verl picks a row's interaction by `interaction_kwargs.name`; with one entry, every
    # row gets it, so the name is not checked against the rows.
    return [("rollout.multi_turn.interaction", ours), NO_STEP_REWARDS]


def translate_multi_turn(key: str, value: Any) -> tuple[list[tuple[str, Any]], list[Note]]:
    """Our overrides and notes for one verl ``multi_turn`` key (which must be in the map)."""
    if key == f"{MT}.format" and str(value) != "hermes":
        raise ConfigError(f"{key}={value!r}: only the 'hermes' tool-call format is parsed")
    if value is None and key.endswith("_path"):
        return [], []  # verl's null: no file
    if key == f"{MT}.tool_config_path":
        return translate_tool_config(value)
    if key == f"{MT}.interaction_config_path":
        return translate_interaction_config(value), []
    if key == f"{MT}.max_user_turns" and not value:
        return [("rollout.multi_turn.max_user_turns", None)], []  # verl: 0 / null, no bound
    target = VERL_MULTI_TURN_KEYS[key]
    return ([(target, value)] if target else []), []


def _true(value: Any) -> bool:
    return value is True or str(value).lower() == "true"


def episode_budget(pairs: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """verl's whole multi-turn response fits in its response length
    (``data.max_response_length``, translated to ``rollout.max_new_tokens``): with
    multi-turn enabled by the same overrides, it is the episode budget too."""
    enabled = any(k == "rollout.multi_turn.enabled" and _true(v) for k, v in pairs)
    lengths = [v for k, v in pairs if k == "rollout.max_new_tokens"]
    if enabled and lengths:
        return [("rollout.multi_turn.max_episode_tokens", lengths[-1])]
    return []

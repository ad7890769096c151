"""Refusing paths in a config that comes from outside (the studio's requests).

Everything here is derived from the path types (trainer.config.paths), so a new
path-bearing field is refused as soon as it is declared with one of them.
"""

from __future__ import annotations

from typing import Any

from trainer.config.overrides import ConfigError, ConfigIssue
from trainer.config.paths import PathKind, path_fields, path_values
from trainer.config.verl import classify
from trainer.config.verl_tools import MT

# verl keys whose value is a file that the translation would read, and what to set
# instead. Their files translate into plain `rollout.multi_turn` values
# (trainer.config.verl_tools), which a studio run sets in its config: a tool file into the
# environment, its timeout and search depth; an interaction file into the interaction.
# Neither is a project resource (docs/resources.md, "Tool and interaction configs").
_TOOL_FIELDS = (
    "rollout.multi_turn.environment (calculator, python, gsm8k_answer or search), "
    "rollout.multi_turn.tool_timeout_s, rollout.multi_turn.search_topk and "
    "rollout.multi_turn.add_step_rewards (false, as verl's reward managers have it)"
)
VERL_FILE_KEYS = {
    f"{MT}.tool_config_path": _TOOL_FIELDS,
    f"{MT}.interaction_config_path": "rollout.multi_turn.interaction (gsm8k), "
    "rollout.multi_turn.max_user_turns and rollout.multi_turn.add_step_rewards (false)",
}
# verl keys that name a server path and are refused before translation. lora_adapter_path
# maps onto a path field of ours, but the translation reads the adapter's config
# (trainer.config.verl._adapter_settings), so it is refused before that.
VERL_PATH_KEYS: dict[str, str] = {"actor_rollout_ref.model.lora_adapter_path": "lora_adapter"}

# What a studio user chooses instead of each kind of path.
INSTEAD: dict[str, str] = {
    "model": "choose the run's model with `model` (a model of the project, /api/models/)",
    "critic_model": "choose the critic's model with `critic_model` (a model of the project, "
    "/api/models/); left out, the critic starts from the run's model",
    "dataset": "choose the training data with `dataset` or `dataset_version` (/api/datasets/)",
    "validation": "choose validation data with `validation` (held-out rows of the training "
    "version, another dataset version, or none)",
    "reward": "choose a reward function version with `reward_version` (/api/rewards/)",
    "reward_model": "choose reward models with `reward_models` (models of the project)",
    "run_folder": "the studio keeps it in the run's own folder",
    "evaluated_model": "choose the models to evaluate with /api/evaluations/ (models of the "
    "project and checkpoints of its runs)",
    "lora_adapter": "choose a saved adapter with `lora_adapter` (a model of the project with "
    "the adapter role, such as a LoRA run's export, /api/models/?role=adapter)",
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


def _verl_path_resource(key: str) -> str:
    found = classify(key)
    return VERL_PATH_KEYS.get(key) or (found.server_path if found else "")


def refuse_file_keys(verl_pairs: list[tuple[str, Any]]) -> None:
    """verl keys that would make the translator read a file, refused before it does, and
    verl keys that name a server path where no field of ours does (ignored ones too)."""
    issues = [
        ConfigIssue(
            key,
            "Names a file on the server, which a request may not do; what the file sets is "
            f"set in the run's config instead: {VERL_FILE_KEYS[key]}.",
            "server_path",
        )
        for key, _ in verl_pairs
        if key in VERL_FILE_KEYS
    ]
    issues += [
        ConfigIssue(
            key,
            "Names a file or folder on the server, which a request may not do; "
            f"{INSTEAD[_verl_path_resource(key)]}.",
            "server_path",
        )
        for key, value in verl_pairs
        if _verl_path_resource(key) and value is not None and value != []
    ]
    if issues:
        raise ConfigError("; ".join(f"{i.path}: {i.message}" for i in issues), issues)

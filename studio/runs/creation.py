"""What a new run is made of: its inputs (references to the project's resources) and its
config with those references filled in. Called by the create and clone views."""

from __future__ import annotations

from typing import Any

from studio.projects.models import Project
from studio.references.reward_choice import unresolved_reward_errors
from studio.references.run_inputs import (
    InputError,
    InputRequest,
    RunInputs,
    choose_inputs,
    filled_paths,
    path_defaults,
)
from studio.runs.configs import InvalidConfig, Resolved, resolve
from studio.runs.models import Run
from trainer.config import RunConfig
from trainer.config.presets import PRESETS


def input_request(data: dict[str, Any]) -> InputRequest:
    """The references a validated create or clone request sent."""
    return InputRequest(
        model=data.get("model"),
        dataset=data.get("dataset"),
        dataset_version=data.get("dataset_version"),
        validation=data.get("validation"),
        validation_version=data.get("validation_version"),
        reward_version=data.get("reward_version"),
        builtin_reward=bool(data.get("builtin_reward")),
        reward_models=data.get("reward_models"),
    )


def inherited_inputs(parent: Run) -> RunInputs | None:
    """A run's inputs, to clone it; None for a run stored before runs had a model."""
    if parent.model is None or parent.dataset_version is None:
        return None
    models = {m.pk: m for m in parent.project.models.filter(pk__in=parent.reward_models.values())}
    return RunInputs(
        model=parent.model,
        dataset_version=parent.dataset_version,
        validation=parent.validation if parent.validation != "config" else "held_out",  # type: ignore[arg-type]
        validation_version=parent.validation_version,
        reward_version=parent.reward_version,
        reward_models={
            place: models[pk] for place, pk in parent.reward_models.items() if pk in models
        },
    )


def compose(
    project: Project,
    data: dict[str, Any],
    user: Any,
    parent: Run | None = None,
) -> tuple[RunInputs, Resolved]:
    """The run's inputs and resolved config; InvalidConfig (errors by request field). An
    input that can't be used and a config error are reported together."""
    chosen: list[RunInputs] = []
    input_errors: dict[str, list[str]] = {}

    def fill(tree: dict[str, Any]) -> dict[str, Any]:
        defaults = path_defaults(RunConfig().model_dump(mode="json"))
        defaults.update(path_defaults(tree))
        inherited = inherited_inputs(parent) if parent is not None else None
        try:
            inputs = choose_inputs(project, input_request(data), defaults, user, inherited)
            filled = filled_paths(inputs, tree)
        except InputError as exc:
            input_errors.update(exc.errors)
            return {}  # the config is still checked, so its own errors show too
        chosen.append(inputs)
        return filled

    stored = parent.config if parent is not None else None
    if stored is not None and data.get("builtin_reward"):
        stored = with_builtin_reward(stored, parent.preset if parent is not None else "")
    try:
        resolved = resolve(
            data.get("config"),
            data.get("overrides"),
            data.get("preset"),
            stored=stored,
            fill=fill,
        )
    except InvalidConfig as exc:
        raise InvalidConfig({**exc.errors, **input_errors}) from exc
    if input_errors:
        raise InvalidConfig(input_errors)
    reward_errors = unresolved_reward_errors(chosen[0], resolved.config)
    if reward_errors:
        raise InvalidConfig(reward_errors)
    return chosen[0], resolved


def with_builtin_reward(config: dict[str, Any], preset: str) -> dict[str, Any]:
    """A parent's config with its reward version's settings replaced by the built-in
    reward its preset names (or none: each row's data source chooses), for a clone that
    drops the version."""
    builtin = RunConfig.model_validate(PRESETS.get(preset, {})).reward
    reward = {
        **config.get("reward", {}),
        "function": builtin.function,
        "custom_path": None,
        "custom_name": builtin.custom_name,
    }
    return {**config, "reward": reward}


def input_fields(inputs: RunInputs) -> dict[str, Any]:
    """The Run model's fields for `inputs`."""
    return {
        "model": inputs.model,
        "dataset_version": inputs.dataset_version,
        "validation": inputs.validation,
        "validation_version": inputs.validation_version,
        "reward_version": inputs.reward_version,
        "reward_models": inputs.reward_model_ids(),
    }

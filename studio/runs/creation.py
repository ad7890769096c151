"""What a new run is made of: its inputs (references to the project's resources) and its
config with those references filled in. Called by the create and clone views."""

from __future__ import annotations

from typing import Any

from studio.projects.models import Project
from studio.references.kinds.reward import with_builtin_reward
from studio.references.reward_choice import unresolved_reward_errors
from studio.references.run_inputs import (
    InputError,
    RunInputs,
    choose_inputs,
    filled_paths,
    inherited_inputs,
    path_defaults,
)
from studio.runs.configs import InvalidConfig, Resolved, resolve
from studio.runs.models import Run
from studio.runs.requests import ConfigRequest
from trainer.config import RunConfig


def compose(
    project: Project,
    request: ConfigRequest,
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
            inputs = choose_inputs(project, request.inputs, defaults, user, inherited)
            filled = filled_paths(inputs, tree)
        except InputError as exc:
            input_errors.update(exc.errors)
            return {}  # the config is still checked, so its own errors show too
        chosen.append(inputs)
        return filled

    stored = parent.config if parent is not None else None
    if stored is not None and request.inputs.get("builtin_reward"):
        stored = with_builtin_reward(stored, parent.preset if parent is not None else "")
    try:
        resolved = resolve(
            request.config,
            request.overrides,
            request.preset or None,
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

"""What a new run is made of: its inputs (references to the project's resources) and its
config with those references filled in. `compose` serves the create and clone requests;
`resolve_with_inputs` is the step every run's creation shares (an evaluation's too:
studio.evaluations.creation chooses its inputs its own way, then resolves through it)."""

from __future__ import annotations

from collections.abc import Callable
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


def stored_config(source: Run | None, builtin_reward: bool) -> dict[str, Any] | None:
    """The config a run starts from when it is made from another (a clone's parent, an
    evaluation's training run), with a built-in reward in place of its reward code when
    the request asks for one; None when it starts from a preset."""
    if source is None:
        return None
    if builtin_reward:
        return with_builtin_reward(source.config, source.preset)
    return source.config


def resolve_with_inputs(
    choose: Callable[[dict[str, Any]], RunInputs],
    config: dict[str, Any] | None = None,
    overrides: list[str] | None = None,
    preset: str | None = None,
    stored: dict[str, Any] | None = None,
    extra_paths: Callable[[RunInputs], dict[str, Any]] | None = None,
) -> tuple[RunInputs, Resolved]:
    """The inputs `choose` picks for the composed config tree and the config resolved with
    their references filled in (plus `extra_paths`, dotted place -> value); InvalidConfig
    (errors by request field or config path). An input that can't be used and a config
    error are reported together; a reward the config names but no input provides is one
    too."""
    chosen: list[RunInputs] = []
    input_errors: dict[str, list[str]] = {}

    def fill(tree: dict[str, Any]) -> dict[str, Any]:
        try:
            inputs = choose(tree)
            filled = filled_paths(inputs, tree)
        except InputError as exc:
            input_errors.update(exc.errors)
            return {}  # the config is still checked, so its own errors show too
        chosen.append(inputs)
        return filled | (extra_paths(inputs) if extra_paths else {})

    try:
        resolved = resolve(config, overrides, preset, stored=stored, fill=fill)
    except InvalidConfig as exc:
        raise InvalidConfig({**exc.errors, **input_errors}) from exc
    if input_errors:
        raise InvalidConfig(input_errors)
    reward_errors = unresolved_reward_errors(chosen[0], resolved.config)
    if reward_errors:
        raise InvalidConfig(reward_errors)
    return chosen[0], resolved


def compose(
    project: Project,
    request: ConfigRequest,
    user: Any,
    parent: Run | None = None,
) -> tuple[RunInputs, Resolved]:
    """A create or clone request's inputs and resolved config; InvalidConfig (errors by
    request field)."""
    inherited = inherited_inputs(parent) if parent is not None else None

    def choose(tree: dict[str, Any]) -> RunInputs:
        defaults = path_defaults(RunConfig().model_dump(mode="json"))
        defaults.update(path_defaults(tree))
        return choose_inputs(project, request.inputs, defaults, user, inherited)

    return resolve_with_inputs(
        choose,
        request.config,
        request.overrides,
        request.preset or None,
        stored=stored_config(parent, bool(request.inputs.get("builtin_reward"))),
    )

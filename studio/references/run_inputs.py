"""A run's inputs: the resources it references, checked for its project, and the
reference strings they leave in its stored config, by walking the registry of input
kinds (studio.references.registry, studio.references.kinds).

A request names resources by id (each kind's request fields); `choose_inputs` checks each
belongs to the run's project. The stored config then holds, in each path-bearing field
(trainer.config.paths), a reference such as `resource:dataset-version/12/train`: every
view of the config shows exactly what the run uses, and two runs on different data differ
in their configs. Only the launcher turns references into paths (`launch_paths`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from studio.projects.models import Project
from studio.references.choices import demo_model, project_models, usable
from studio.references.kinds.folders import run_folder_references
from studio.references.kinds.validation import VALIDATION_CHOICES, Validation
from studio.references.reference import REF, Reference, is_reference
from studio.references.registry import Choice, InputError, RunInputs, input_kinds
from studio.runs.models import Run
from trainer.config.paths import path_fields, path_values

__all__ = [
    "REF",
    "VALIDATION_CHOICES",
    "InputError",
    "Reference",
    "RunInputs",
    "Validation",
    "choose_inputs",
    "completed_inputs",
    "demo_model",
    "filled_paths",
    "inherited_inputs",
    "input_fields",
    "is_reference",
    "path_defaults",
    "project_models",
    "usable",
]


def choose_inputs(
    project: Project,
    data: Mapping[str, Any],
    defaults: Mapping[str, Any],
    user: Any,
    inherited: RunInputs | None = None,
) -> RunInputs:
    """The run's inputs: for each kind, what `data` (a validated create or clone
    request) names, else what `inherited` (a cloned run) had, else the default
    (`defaults`: the path values of the preset and config, for its demo models)."""
    chosen: dict[str, Any] = {}
    for kind in input_kinds():
        context = Choice(project, user, defaults, chosen)
        parents = inherited.values.get(kind.name) if inherited is not None else None
        chosen[kind.name] = kind.choose(data, parents, context)
    return RunInputs(chosen)


def completed_inputs(project: Project, values: Mapping[str, Any]) -> RunInputs:
    """`values`, and for every other registered kind what a request naming none of it
    chooses: how an evaluation on a dataset version, which sets the kinds it knows, is
    made of every kind. No user: a kind's default may not add records."""
    chosen = dict(values)
    for kind in input_kinds():
        if kind.name not in chosen:
            chosen[kind.name] = kind.choose({}, None, Choice(project, None, {}, chosen))
    return RunInputs(chosen)


def inherited_inputs(parent: Run) -> RunInputs:
    """A run's inputs, to clone it (a provenance record is never cloned:
    studio.runs.service.clone_run)."""
    return RunInputs({kind.name: kind.inherit(parent) for kind in input_kinds()})


def filled_paths(inputs: RunInputs, tree: dict[str, Any]) -> dict[str, Any]:
    """Dotted place -> reference (or None) for every path-bearing field but an
    evaluation's models (filled by its own request: studio.evaluations.creation), plus
    the settings the choices imply. `tree` is the config the places are filled in."""
    filled: dict[str, Any] = dict(run_folder_references())
    for kind in input_kinds():
        filled.update(kind.references(inputs[kind.name], inputs, tree))
    return filled


def input_fields(inputs: RunInputs) -> dict[str, Any]:
    """The Run model's fields for `inputs`."""
    return {
        name: value
        for kind in input_kinds()
        for name, value in kind.model_fields(inputs[kind.name]).items()
    }


def path_defaults(tree: dict[str, Any]) -> dict[str, Any]:
    """Dotted place -> value of every path-bearing field set in `tree` (a preset's or a
    stored config's)."""
    return {
        place: value
        for path_field in path_fields()
        for place, value in path_values(tree, path_field.steps)
    }

"""Making a trial's run: the sweep's base with the trial's parameters, through the runs
service like any other run (its owner's, under the queue's fair share and caps)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from studio.runs import service
from studio.runs.models import Run
from studio.runs.requests import CloneRun, CreateRun
from studio.sweeps.models import Sweep
from studio.sweeps.space import Parameter, split_params

VALIDATION_FUNCTION = "reward.validation_function"


def yaml_scalar(value: Any) -> str:
    """`value` as an override's text that YAML reads back as exactly `value` (a float
    keeps its dot and signed exponent: YAML 1.1 reads `1e-05` as a string)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value} can't be a config value")
        return f"{value:.17e}"
    return json.dumps(str(value))  # a JSON string is a YAML double-quoted scalar


def trial_overrides(sweep: Sweep, config_values: Mapping[str, Any]) -> list[str]:
    """The overrides that make the base a trial: after the base's own, so they win."""
    overrides = [f"{key}={yaml_scalar(value)}" for key, value in sorted(config_values.items())]
    if sweep.metric_reward:
        overrides.append(f"{VALIDATION_FUNCTION}={yaml_scalar(sweep.metric_reward)}")
    return overrides


def trial_tag(sweep: Sweep) -> str:
    return f"sweep-{sweep.pk}"


def trial_request(
    sweep: Sweep, number: int, params: Mapping[str, Any], space: Sequence[Parameter]
) -> CloneRun | CreateRun:
    """The create (or clone) request of trial `number`."""
    config_values, input_values = split_params(params, space)
    name = f"{sweep.name} · trial {number}"[:200]
    notes = f"Trial {number} of sweep {sweep.pk} ({sweep.name}): " + ", ".join(
        f"{k}={v}" for k, v in params.items()
    )
    if sweep.base_run is not None:
        tags = [*sweep.base_run.tags, trial_tag(sweep)]
        return CloneRun(
            name=name,
            overrides=trial_overrides(sweep, config_values),
            inputs=input_values,
            tags=tags,
            notes=notes,
        )
    base = sweep.base_request
    return CreateRun(
        name=name,
        preset=sweep.preset,
        config=base.get("config"),
        overrides=[*base.get("overrides", []), *trial_overrides(sweep, config_values)],
        inputs={**base.get("inputs", {}), **input_values},
        tags=[trial_tag(sweep)],
        notes=notes,
    )


def start_trial_run(
    sweep: Sweep, number: int, params: Mapping[str, Any], space: Sequence[Parameter]
) -> Run:
    """Trial `number`'s run, stored queued; InvalidConfig when the base refuses these
    parameters."""
    request = trial_request(sweep, number, params, space)
    if isinstance(request, CloneRun):
        assert sweep.base_run is not None
        return service.clone_run(sweep.base_run, request, sweep.created_by)
    return service.create_run(sweep.project, request, sweep.created_by)

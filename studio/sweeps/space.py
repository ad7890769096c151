"""A sweep's search space: the parameters as posted, checked, and as Optuna distributions.

A parameter is a config key (`actor.optim.lr`) with a range or choices, or a run input
(`reward_version`, `dataset_version`, `model`, ...: an id field of a registered input kind,
studio.references.registry) with choices of ids:

    {"name": "actor.optim.lr", "type": "float", "low": 1e-5, "high": 1e-3, "log": true}
    {"name": "rollout.n", "type": "int", "low": 2, "high": 8, "step": 2}
    {"name": "rollout.temperature", "type": "choice", "values": [0.7, 1.0]}
    {"name": "reward_version", "type": "input", "values": [7, 8]}
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from rest_framework import serializers

from studio.references.registry import request_fields
from trainer.config import RunConfig

MAX_PARAMETERS = 16
MAX_CHOICES = 64
MAX_GRID = 10_000
PARAM_TYPES = ("float", "int", "choice", "input")
Scalar = bool | int | float | str | None


class SpaceError(ValueError):
    """A parameter that can't be searched; the message names it."""


@dataclass(frozen=True)
class Parameter:
    name: str
    type: str
    low: float | None = None
    high: float | None = None
    log: bool = False
    step: int | None = None
    values: tuple[Scalar, ...] = ()

    @property
    def is_input(self) -> bool:
        return self.type == "input"

    def distribution(self) -> BaseDistribution:
        if self.type == "float":
            assert self.low is not None and self.high is not None
            return FloatDistribution(self.low, self.high, log=self.log)
        if self.type == "int":
            assert self.low is not None and self.high is not None
            return IntDistribution(int(self.low), int(self.high), step=self.step or 1)
        return CategoricalDistribution(self.values)

    def grid_values(self) -> list[Scalar]:
        """The values a grid tries; SpaceError for a continuous range."""
        if self.type == "float":
            raise SpaceError(
                f"{self.name}: a grid can't search a float range; give its values as a "
                "choice, or use random or tpe."
            )
        if self.type == "int":
            assert self.low is not None and self.high is not None
            return list(range(int(self.low), int(self.high) + 1, self.step or 1))
        return list(self.values)

    def corners(self) -> list[Scalar]:
        """The values that bound what a trial can get: composed at creation, so that a
        space the config refuses is a 400 then, not a failed trial later."""
        if self.type == "int":
            assert self.low is not None and self.high is not None
            return [int(self.low), int(self.high)]
        if self.type == "float":
            return [self.low, self.high]
        return list(self.values)


def input_names() -> list[str]:
    """The run inputs a space can search: the id fields of the registered input kinds."""
    return sorted(
        name
        for name, field in request_fields().items()
        if isinstance(field, serializers.IntegerField)
    )


def _config_leaves() -> set[str]:
    leaves: set[str] = set()

    def walk(tree: Mapping[str, Any], prefix: str) -> None:
        for key, value in tree.items():
            path = f"{prefix}{key}"
            if isinstance(value, Mapping) and value:
                walk(value, f"{path}.")
            else:
                leaves.add(path)

    walk(RunConfig().model_dump(mode="json"), "")
    return leaves


def _number(raw: Mapping[str, Any], key: str, name: str) -> float:
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise SpaceError(f"{name}: `{key}` must be a finite number.")
    return float(value)


def parse_parameter(raw: Any) -> Parameter:
    if not isinstance(raw, Mapping):
        raise SpaceError("Each parameter is an object with `name` and `type`.")
    name, kind = raw.get("name"), raw.get("type")
    if not isinstance(name, str) or not name:
        raise SpaceError("A parameter needs a `name`: a config key or a run input.")
    if kind not in PARAM_TYPES:
        raise SpaceError(f"{name}: `type` is one of {', '.join(PARAM_TYPES)}.")
    if kind == "input":
        if name not in input_names():
            raise SpaceError(
                f"{name}: not a run input; inputs a sweep can search: {', '.join(input_names())}."
            )
    elif name not in _config_leaves():
        raise SpaceError(f"{name}: not a key of the run config (e.g. actor.optim.lr).")
    if kind in ("choice", "input"):
        values = raw.get("values")
        if not isinstance(values, list) or not 1 <= len(values) <= MAX_CHOICES:
            raise SpaceError(f"{name}: `values` is a list of 1 to {MAX_CHOICES} choices.")
        if kind == "input" and not all(
            isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in values
        ):
            raise SpaceError(f"{name}: an input's `values` are ids (positive integers).")
        if not all(isinstance(v, bool | int | float | str) or v is None for v in values):
            raise SpaceError(f"{name}: choices are numbers, strings, booleans or null.")
        if len({repr(v) for v in values}) != len(values):
            raise SpaceError(f"{name}: a choice is listed twice.")
        return Parameter(name, kind, values=tuple(values))
    low, high = _number(raw, "low", name), _number(raw, "high", name)
    if low >= high:
        raise SpaceError(f"{name}: `low` must be below `high`.")
    log = bool(raw.get("log", False))
    if log and low <= 0:
        raise SpaceError(f"{name}: a log scale needs `low` > 0.")
    if kind == "int":
        step = raw.get("step", 1)
        if not low.is_integer() or not high.is_integer():
            raise SpaceError(f"{name}: an int range has integer bounds.")
        if not isinstance(step, int) or isinstance(step, bool) or step < 1:
            raise SpaceError(f"{name}: `step` is a positive integer.")
        if log and step != 1:
            raise SpaceError(f"{name}: a log-scale int range has step 1.")
        return Parameter(name, kind, low=low, high=high, log=log, step=step)
    return Parameter(name, kind, low=low, high=high, log=log)


def parse_space(raw: Any) -> list[Parameter]:
    """The parameters of a posted space; SpaceError naming the first problem."""
    if not isinstance(raw, list) or not 1 <= len(raw) <= MAX_PARAMETERS:
        raise SpaceError(f"The space is a list of 1 to {MAX_PARAMETERS} parameters.")
    params = [parse_parameter(item) for item in raw]
    names = [p.name for p in params]
    if len(set(names)) != len(names):
        raise SpaceError("A parameter is listed twice.")
    return params


def distributions(params: Sequence[Parameter]) -> dict[str, BaseDistribution]:
    return {p.name: p.distribution() for p in params}


def grid_size(params: Sequence[Parameter]) -> int | None:
    """How many trials a grid over `params` has; None when one of them is a float range."""
    size = 1
    for p in params:
        if p.type == "float":
            return None
        size *= len(p.grid_values())
    return size


def split_params(
    params: Mapping[str, Any], space: Sequence[Parameter]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A trial's parameters as (config key -> value, input field -> id)."""
    inputs = {p.name for p in space if p.is_input}
    return (
        {k: v for k, v in params.items() if k not in inputs},
        {k: v for k, v in params.items() if k in inputs},
    )

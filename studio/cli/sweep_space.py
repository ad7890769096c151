"""A sweep's search space from the command line: `--param` options in a compact syntax,
or a `--space-file`; a malformed one is a `UsageError` (exit 2) naming the option.

    NAME=float:LOW:HIGH[:log]   actor.optim.lr=float:1e-5:1e-3:log
    NAME=int:LOW:HIGH[:STEP]    rollout.n=int:2:8:2
    NAME=choice:V1,V2,...       rollout.temperature=choice:0.7,1.0
    NAME=input:ID1,ID2,...      reward_version=input:7,8

Each becomes one parameter of the API's `space` (docs/sweeps.md); the server checks the
names against the run config and the run inputs.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from studio.cli.input_files import UsageError

PARAM_HELP = (
    "a parameter to search (repeatable): NAME=float:LOW:HIGH[:log], NAME=int:LOW:HIGH[:STEP], "
    "NAME=choice:V1,V2,... (numbers, true, false and null as such, anything else as text) "
    "or NAME=input:ID1,ID2,... (a run input field: model, dataset_version, "
    "validation_version, reward_version, critic_model, lora_adapter); e.g. "
    "actor.optim.lr=float:1e-5:1e-3:log, rollout.n=int:2:8:2, "
    "rollout.temperature=choice:0.7,1.0, reward_version=input:7,8"
)
SPACE_FILE_HELP = (
    "the space as a JSON or YAML file: a list of the API's parameters "
    '({"name": ..., "type": "float", "low": ..., "high": ..., "log": true}, ...) or a '
    "mapping with that list under `space`; --param options are added after it"
)
SYNTAX = {
    "float": "float:LOW:HIGH[:log]",
    "int": "int:LOW:HIGH[:STEP]",
    "choice": "choice:V1,V2,...",
    "input": "input:ID1,ID2,...",
}


def _number(text: str, option: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"{option}: {text!r} is not a number") from None
    if not math.isfinite(value):
        raise UsageError(f"{option}: {text!r} is not a finite number")
    return value


def _integer(text: str, option: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"{option}: {text!r} is not an integer") from None


def _scalar(text: str) -> Any:
    """A choice's value: JSON's numbers, true, false, null and "quoted text"; else the text."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, bool | int | float | str) or value is None else text


def _values(text: str, option: str) -> list[str]:
    values = [v.strip() for v in text.split(",")]
    if not text.strip() or any(not v for v in values):
        raise UsageError(f"{option}: give comma-separated values, none of them empty")
    return values


def parse_param(text: str) -> dict[str, Any]:
    """One `--param NAME=TYPE:...` as the API's parameter."""
    option = f"--param {text!r}"
    name, sep, spec = text.partition("=")
    name = name.strip()
    kind, _, rest = spec.partition(":")
    kind = kind.strip()
    if not sep or not name:
        raise UsageError(f"{option}: expected NAME=TYPE:..., e.g. actor.optim.lr=float:1e-5:1e-3")
    if kind not in SYNTAX:
        forms = " | ".join(f"NAME={syntax}" for syntax in SYNTAX.values())
        raise UsageError(f"{option}: the type is one of {', '.join(SYNTAX)} ({forms})")
    usage = f"{option}: expected {name}={SYNTAX[kind]}"
    if kind in ("float", "int"):
        parts = rest.split(":")
        if len(parts) not in (2, 3):
            raise UsageError(usage)
        param: dict[str, Any] = {"name": name, "type": kind}
        if kind == "float":
            param |= {"low": _number(parts[0], option), "high": _number(parts[1], option)}
            if len(parts) == 3:
                if parts[2] not in ("log", "linear"):
                    raise UsageError(f"{usage} (the scale is log or linear, not {parts[2]!r})")
                param["log"] = parts[2] == "log"
        else:
            param |= {"low": _integer(parts[0], option), "high": _integer(parts[1], option)}
            if len(parts) == 3:
                param["step"] = _integer(parts[2], option)
        if param["low"] > param["high"]:
            raise UsageError(f"{option}: LOW is above HIGH")
        return param
    if not rest:
        raise UsageError(usage)
    values = _values(rest, option)
    if kind == "input":
        return {"name": name, "type": kind, "values": [_integer(v, option) for v in values]}
    return {"name": name, "type": kind, "values": [_scalar(v) for v in values]}


def read_space_file(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"can't read {path}: {exc}") from None
    try:
        if path.suffix in (".yaml", ".yml"):
            import yaml

            tree = yaml.safe_load(text)
        else:
            tree = json.loads(text)
    except ValueError as exc:  # json.JSONDecodeError and yaml.YAMLError's parse errors
        raise UsageError(f"{path} is not valid {path.suffix[1:] or 'JSON'}: {exc}") from None
    if isinstance(tree, dict) and "space" in tree:
        tree = tree["space"]
    if not isinstance(tree, list) or not all(isinstance(p, dict) for p in tree):
        raise UsageError(f"{path} must hold a list of parameters (or one under `space`)")
    return tree


def build_space(params: list[str], space_file: Path | None) -> list[dict[str, Any]]:
    space = read_space_file(space_file) if space_file else []
    space += [parse_param(text) for text in params]
    if not space:
        raise UsageError("give the space: --param NAME=TYPE:... (repeatable) or --space-file")
    names = [p.get("name") for p in space]
    repeated = sorted({str(n) for n in names if names.count(n) > 1})
    if repeated:
        raise UsageError(f"a parameter is given twice: {', '.join(repeated)}")
    return space

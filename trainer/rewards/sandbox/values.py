"""What a reward function may return, as plain data (the sandbox's side of `contract`).

A finite number (float, int, bool, numpy scalar), or a dict with a finite ``"score"``
and at most `MAX_COMPONENTS` other finite numeric components. Kept free of dataclasses
and typing machinery: the sandbox's zygote imports it, and every page it holds makes
each fork slower.
"""

from __future__ import annotations

import math
import numbers
import re
import reprlib
from typing import Any

from trainer.rewards.errors import InvalidReturn

MAX_COMPONENTS = 64  # keys of a dict return, "score" included
MAX_COMPONENT_NAME = 64  # characters of a component name
MAX_ERROR_CHARS = 2000

# What Postgres refuses in text and JSON: NUL, and UTF-16 surrogates without a partner
# (a Python str can hold them; they have no UTF-8 encoding).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")

_short = reprlib.Repr()
_short.maxstring = 60
_short.maxother = 60
_short.maxlist = _short.maxtuple = _short.maxdict = _short.maxset = 4


def as_finite_float(value: Any, what: str) -> float:
    # numpy scalars (float32, int64, bool_) have .item(); unwrap them first.
    if (
        not isinstance(value, numbers.Real)
        and hasattr(value, "dtype")
        and getattr(value, "shape", None) == ()
    ):
        value = value.item()
    if not isinstance(value, numbers.Real):
        raise InvalidReturn(
            f"{what} is {type(value).__name__} ({_short.repr(value)}); expected a finite "
            "number (float, int or bool)"
        )
    try:
        number = float(value)
    except (OverflowError, ValueError, TypeError) as exc:
        raise InvalidReturn(f"{what} cannot be a float: {exc}") from None
    if not math.isfinite(number):
        raise InvalidReturn(f"{what} is {number}; rewards must be finite")
    return number


def text_problem(text: str, what: str) -> str:
    """Why ``text`` cannot be stored (a NUL or a lone surrogate, and where), or ''."""
    found = _UNSTORABLE.search(text)
    if found is None:
        return ""
    char = found.group()
    name = "a NUL character" if char == "\x00" else f"a lone surrogate (U+{ord(char):04X})"
    return (
        f"{what} contains {name} at offset {found.start()}; text must be valid Unicode without NUL"
    )


def escape_text(text: str) -> str:
    """``text`` with every NUL and lone surrogate written as an escape (\\x00, \\udc80)."""
    return _UNSTORABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def parse_return(value: Any) -> tuple[float, dict[str, float]]:
    """(score, components) of a valid return value; raises `InvalidReturn` otherwise."""
    if isinstance(value, dict):
        if len(value) > MAX_COMPONENTS:
            raise InvalidReturn(f"dict has {len(value)} keys; at most {MAX_COMPONENTS} are allowed")
        if "score" not in value:
            keys = ", ".join(sorted(str(k) for k in list(value)[:8]))
            raise InvalidReturn(f"dict has no 'score' key (keys: {keys})")
        score = as_finite_float(value["score"], "score")
        components: dict[str, float] = {}
        for key, item in value.items():
            if key == "score":
                continue
            if not isinstance(key, str) or not key or len(key) > MAX_COMPONENT_NAME:
                raise InvalidReturn(
                    f"component name {_short.repr(key)} must be a non-empty string of at "
                    f"most {MAX_COMPONENT_NAME} characters"
                )
            problem = text_problem(key, f"component name {_short.repr(key)}")
            if problem:
                raise InvalidReturn(problem)
            components[key] = as_finite_float(item, f"component {key!r}")
        return score, components
    if isinstance(value, (str, bytes, list, tuple, set, frozenset)) or value is None:
        size = f" of length {len(value)}" if value is not None else ""
        raise InvalidReturn(
            f"{type(value).__name__}{size} ({_short.repr(value)}); return a finite number "
            "or a dict with a 'score' key"
        )
    return as_finite_float(value, "return value"), {}


def batch_length_problem(values: Any, count: int) -> str:
    """Why a batch function's return cannot be matched to its ``count`` rows, or ''."""
    if isinstance(values, (list, tuple)) and len(values) == count:
        return ""
    got = f"{len(values)} values" if isinstance(values, (list, tuple)) else type(values).__name__
    return (
        f"invalid return: the batch function returned {got} for {count} rows; return a "
        "list with one reward per row, in order"
    )


def wire_error(reason: str) -> dict[str, Any]:
    # Reasons quote user text (exception messages): never let one carry what can't be stored.
    return {"score": 0.0, "components": {}, "error": escape_text(reason)[:MAX_ERROR_CHARS]}


def wire_from_return(value: Any) -> dict[str, Any]:
    """A user return value as a result message (an error one if it is invalid)."""
    try:
        score, components = parse_return(value)
    except InvalidReturn as exc:
        return wire_error(f"invalid return: {exc}")
    return {"score": score, "components": components, "error": ""}


def validate_wire(obj: Any) -> dict[str, Any]:
    """Re-check a result message that crossed a process boundary (hostile code may have
    written it): the same rules as for a return value."""
    if not isinstance(obj, dict):
        return wire_error("invalid result message from the sandbox")
    error = obj.get("error")
    if isinstance(error, str) and error:
        return wire_error(error)
    components = obj.get("components")
    if not isinstance(components, dict):
        return wire_error("invalid result message from the sandbox")
    return wire_from_return({**components, "score": obj.get("score")})

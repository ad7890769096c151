"""What a reward function may return, as plain data (the sandbox's side of `contract`).

A finite number (float, int, bool, numpy scalar), or a dict with a finite ``"score"``
and at most `MAX_COMPONENTS` keys in all, as verl's reward managers read it: a finite
number or boolean is a component (charted, watched by the alerts); a string, None, or a
list or dict of such JSON values is the sample's extra info (kept with the sample, not
charted), at most `MAX_EXTRA_BYTES` of JSON per row. Kept free of dataclasses and typing
machinery: the sandbox's zygote imports it, and every page it holds makes each fork
slower.
"""

from __future__ import annotations

import json
import math
import numbers
import re
import reprlib
from typing import Any

from trainer.rewards.errors import InvalidReturn

MAX_COMPONENTS = 64  # keys of a dict return, "score" included
MAX_COMPONENT_NAME = 64  # characters of a component name
MAX_ERROR_CHARS = 2000
# A row's extra info (a dict return's strings, None, lists and dicts), as compact JSON:
# enough for a parsed answer or a few flags, small next to the response it describes.
MAX_EXTRA_BYTES = 2048
MAX_EXTRA_DEPTH = 8  # nesting of lists and dicts inside one extra value

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


def _is_number(value: Any) -> bool:
    if isinstance(value, numbers.Real):
        return True
    # numpy scalars (float32, int64, bool_): 0-dimensional, with a dtype.
    return hasattr(value, "dtype") and getattr(value, "shape", None) == ()


def _check_extra(value: Any, what: str, depth: int = 0) -> None:
    """Raise `InvalidReturn` unless ``value`` is storable JSON: str, None, finite numbers,
    booleans, and lists or dicts (string keys) of them."""
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, str):
        problem = text_problem(value, what)
        if problem:
            raise InvalidReturn(problem)
        return
    if isinstance(value, numbers.Real):
        as_finite_float(value, what)
        return
    if depth >= MAX_EXTRA_DEPTH:
        raise InvalidReturn(f"{what} is nested deeper than {MAX_EXTRA_DEPTH} levels")
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_extra(item, f"{what}[{i}]", depth + 1)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidReturn(f"{what} has a non-string key {_short.repr(key)}")
            problem = text_problem(key, f"{what} key {_short.repr(key)}")
            if problem:
                raise InvalidReturn(problem)
            _check_extra(item, f"{what}[{key!r}]", depth + 1)
        return
    raise InvalidReturn(
        f"{what} is {type(value).__name__} ({_short.repr(value)}); expected a finite number "
        "or boolean (a component), or a string, None, or a list or dict of those (extra info)"
    )


def extra_size_problem(extra: dict[str, Any]) -> str:
    """Why a row's extra info is too large to keep, or ''."""
    size = len(json.dumps(extra, ensure_ascii=False, separators=(",", ":")).encode())
    if size <= MAX_EXTRA_BYTES:
        return ""
    sizes = sorted(
        ((len(json.dumps(v, ensure_ascii=False).encode()), k) for k, v in extra.items()),
        reverse=True,
    )
    largest = ", ".join(f"{k!r} ({n} bytes)" for n, k in sizes[:3])
    return (
        f"extra info takes {size} bytes as JSON; at most {MAX_EXTRA_BYTES} per row "
        f"(largest: {largest}); return less, or keep it out of the reward's return"
    )


def extra_problem(extra: Any) -> str:
    """Why ``extra`` is not a row's extra info as `parse_return` makes it, or '' (for
    those who receive one from elsewhere: the studio's ingest)."""
    if not isinstance(extra, dict):
        return f"extra info is {type(extra).__name__}; expected a dict"
    if len(extra) > MAX_COMPONENTS:
        return f"extra info has {len(extra)} keys; at most {MAX_COMPONENTS}"
    for key, value in extra.items():
        if not isinstance(key, str) or not key or len(key) > MAX_COMPONENT_NAME:
            return (
                f"extra info key {_short.repr(key)} must be a non-empty string of at most "
                f"{MAX_COMPONENT_NAME} characters"
            )
        try:
            problem = text_problem(key, f"extra info key {_short.repr(key)}")
            if problem:
                return problem
            _check_extra(value, f"extra info {key!r}")
        except InvalidReturn as exc:
            return str(exc)
    return extra_size_problem(extra)


def parse_return(value: Any) -> tuple[float, dict[str, float], dict[str, Any]]:
    """(score, components, extra info) of a valid return value; raises `InvalidReturn`
    otherwise."""
    if isinstance(value, dict):
        if len(value) > MAX_COMPONENTS:
            raise InvalidReturn(f"dict has {len(value)} keys; at most {MAX_COMPONENTS} are allowed")
        if "score" not in value:
            keys = ", ".join(sorted(str(k) for k in list(value)[:8]))
            raise InvalidReturn(f"dict has no 'score' key (keys: {keys})")
        score = as_finite_float(value["score"], "score")
        components: dict[str, float] = {}
        extra: dict[str, Any] = {}
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
            if _is_number(item):
                components[key] = as_finite_float(item, f"component {key!r}")
            else:
                _check_extra(item, f"extra info {key!r}")
                extra[key] = list(item) if isinstance(item, tuple) else item
        problem = extra_size_problem(extra) if extra else ""
        if problem:
            raise InvalidReturn(problem)
        return score, components, extra
    if isinstance(value, (str, bytes, list, tuple, set, frozenset)) or value is None:
        size = f" of length {len(value)}" if value is not None else ""
        raise InvalidReturn(
            f"{type(value).__name__}{size} ({_short.repr(value)}); return a finite number "
            "or a dict with a 'score' key"
        )
    return as_finite_float(value, "return value"), {}, {}


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
    return {
        "score": 0.0,
        "components": {},
        "extra": {},
        "error": escape_text(reason)[:MAX_ERROR_CHARS],
    }


def wire_from_return(value: Any) -> dict[str, Any]:
    """A user return value as a result message (an error one if it is invalid)."""
    try:
        score, components, extra = parse_return(value)
    except InvalidReturn as exc:
        return wire_error(f"invalid return: {exc}")
    return {"score": score, "components": components, "extra": extra, "error": ""}


def validate_wire(obj: Any) -> dict[str, Any]:
    """Re-check a result message that crossed a process boundary (hostile code may have
    written it): the same rules as for a return value."""
    if not isinstance(obj, dict):
        return wire_error("invalid result message from the sandbox")
    error = obj.get("error")
    if isinstance(error, str) and error:
        return wire_error(error)
    components, extra = obj.get("components"), obj.get("extra", {})
    if not isinstance(components, dict) or not isinstance(extra, dict) or components.keys() & extra:
        return wire_error("invalid result message from the sandbox")
    clean = wire_from_return({**components, **extra, "score": obj.get("score")})
    if not clean["error"] and clean["components"].keys() != components.keys():
        # A number sent as extra info, or text sent as a component: a forged message.
        return wire_error("invalid result message from the sandbox")
    return clean

"""Finding the reward function in a module and checking it can be called as verl calls it.

verl calls ``compute_score(data_source=..., solution_str=..., ground_truth=...,
extra_info=...)`` by keyword. Its batch reward manager calls the same configured
function with lists instead: ``compute_score(data_sources=..., solution_strs=...,
ground_truths=..., extra_infos=...)``. A function is a batch function when it names any
of those plural parameters (`is_batch_form`); there is no other marker, so a verl batch
module works unchanged. A module may also define ``<name>_batch`` beside the per-sample
function. Checked from the code object, without `inspect` (the sandbox's zygote stays
small; see `values`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trainer.rewards.errors import RewardCodeError

if TYPE_CHECKING:
    from collections.abc import Iterable

SINGLE_ARGS = ("data_source", "solution_str", "ground_truth", "extra_info")
BATCH_ARGS = ("data_sources", "solution_strs", "ground_truths", "extra_infos")
_CO_VARKEYWORDS, _CO_COROUTINE, _CO_ASYNC_GENERATOR = 0x08, 0x80, 0x200


def batch_name_for(function_name: str) -> str:
    """The batch form looked for beside ``function_name`` (``compute_score_batch``)."""
    return function_name if function_name.endswith("_batch") else f"{function_name}_batch"


def is_batch_form(parameter_names: Iterable[str]) -> bool:
    """Whether a function with these named parameters is verl's batch form. Naming any
    plural argument decides (a partial batch signature then fails the batch check, with
    a message naming what is missing); ``**kwargs`` alone is the per-sample form, as
    verl's default reward manager would call it."""
    return any(name in BATCH_ARGS for name in parameter_names)


def parameter_names(fn: Any) -> tuple[str, ...]:
    """The parameters ``fn`` names (positional and keyword-only); () when it has no code."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return ()
    return tuple(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])


def find_reward(namespace: dict[str, Any], function_name: str) -> tuple[Any, Any]:
    """(per-sample function or None, batch function or None) from an executed module."""
    batch = batch_name_for(function_name)
    fn = namespace.get(function_name) if function_name != batch else None
    batch_fn = namespace.get(batch)
    if fn is None and batch_fn is None:
        raise RewardCodeError(f"the code defines no {function_name!r} after running it")
    if fn is not None and callable(fn) and is_batch_form(parameter_names(fn)):
        if batch_fn is not None:
            raise RewardCodeError(
                f"{function_name!r} takes verl's batch arguments ({', '.join(BATCH_ARGS)}) "
                f"and {batch!r} is defined too; keep one batch function"
            )
        check_callable(fn, function_name, BATCH_ARGS)
        return None, fn
    if fn is not None:
        check_callable(fn, function_name, SINGLE_ARGS)
    if batch_fn is not None:
        check_callable(batch_fn, batch, BATCH_ARGS)
    return fn, batch_fn


def check_callable(fn: Any, name: str, args: tuple[str, ...]) -> None:
    """Raise `RewardCodeError` unless ``fn(**{a: ... for a in args})`` binds."""
    if not callable(fn):
        raise RewardCodeError(f"{name!r} is a {type(fn).__name__}, not a function")
    code = getattr(fn, "__code__", None)
    if code is None:
        return  # builtins, partials, callable objects: the call itself reports problems
    if code.co_flags & (_CO_COROUTINE | _CO_ASYNC_GENERATOR):
        raise RewardCodeError(f"{name!r} is `async def`; reward functions must be plain def")
    positional = code.co_varnames[: code.co_argcount]
    keyword_only = code.co_varnames[code.co_argcount : code.co_argcount + code.co_kwonlyargcount]
    posonly = code.co_varnames[: code.co_posonlyargcount]
    accepts_any = bool(code.co_flags & _CO_VARKEYWORDS)
    defaults = len(getattr(fn, "__defaults__", None) or ())
    kwdefaults = set(getattr(fn, "__kwdefaults__", None) or {})
    call = f"{name}({', '.join(f'{a}=...' for a in args)})"
    hint = "; verl passes these arguments by keyword (add **kwargs for extras)"
    for arg in args:
        if arg in posonly or (
            arg not in positional and arg not in keyword_only and not accepts_any
        ):
            raise RewardCodeError(f"{call} fails: no parameter named {arg!r}{hint}")
    required = [p for p in positional[: len(positional) - defaults] if p not in args]
    required += [p for p in keyword_only if p not in kwdefaults and p not in args]
    if required:
        raise RewardCodeError(
            f"{call} fails: parameter(s) {', '.join(required)} have no default{hint}"
        )


def describe_exception(exc: BaseException, filename: str = "reward.py") -> str:
    """``ValueError: bad input (line 7)``: the traceback's last line plus the user's line."""
    message = str(exc)
    if len(message) > 500:
        message = message[:500] + "..."
    text = type(exc).__name__ + (f": {message}" if message else "")
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    if isinstance(exc, SyntaxError) and exc.lineno and exc.filename == filename:
        line = exc.lineno
    return text + (f" (line {line})" if line else "")


# Frames of the user's code kept in a failed call's error: enough for a recursion's
# pattern, bounded so an error stays small in every stored sample.
MAX_USER_FRAMES = 8


def user_frames(exc: BaseException, filename: str = "reward.py") -> str:
    """The traceback of `exc` trimmed to the frames in the user's file (never a path of
    the server's own code), most recent last; "" when none is there."""
    frames: list[str] = []
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == filename:
            frames.append(f'  File "{filename}", line {tb.tb_lineno}, in {code.co_name}')
        tb = tb.tb_next
    if not frames:
        return ""
    if len(frames) > MAX_USER_FRAMES:
        skipped = len(frames) - MAX_USER_FRAMES
        frames = [f"  ... {skipped} earlier frames", *frames[-MAX_USER_FRAMES:]]
    return "Traceback (most recent call last):\n" + "\n".join(frames)


def call_error(exc: BaseException, filename: str = "reward.py") -> str:
    """A failed call's error: ``exception: ValueError: bad (line 7)`` and, on the next
    lines, the user's frames of its traceback."""
    frames = user_frames(exc, filename)
    return f"exception: {describe_exception(exc, filename)}" + (f"\n{frames}" if frames else "")

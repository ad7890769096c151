"""One call in its own fork of the template: the only place the user's code runs.

The fork closes every descriptor but its own two pipes (output, and a private result
pipe the template made for this call alone) before the user's module runs, so it never
holds the template's channel to the zygote: it cannot write another call's result,
announce a call, or move a deadline. The template, which never runs user code, reads the
fork's result (bounded), re-validates it like anything from hostile code, and is the only
writer to the zygote.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import os
import select
import signal
import sys
import traceback
from dataclasses import dataclass
from types import CodeType
from typing import Any

from trainer.rewards.errors import RewardCodeError
from trainer.rewards.sandbox.values import (
    batch_length_problem,
    validate_wire,
    wire_error,
    wire_from_return,
)
from trainer.rewards.signature import (
    BATCH_ARGS,
    SINGLE_ARGS,
    call_error,
    describe_exception,
    find_reward,
)

# Frames of the user's code read `File "reward.py", line N`: the studio points at them.
FILENAME = "reward.py"
# A 64-request batch with 64 components (~0.3 MiB) and 2 KB of extra info each (~0.13 MiB).
MAX_CALL_RESULT_BYTES = 1 << 20
LOAD_ERROR_OUTPUT_CHARS = 2000


@dataclass
class CallOutcome:
    status: int  # os.waitpid status of the fork
    output: str  # what it printed (the first output_bytes), decoded
    dropped: int  # bytes of output beyond output_bytes
    results: list[dict[str, Any]] | None  # validated, one per request; None: no result
    load_error: str = ""  # the module failed to load (or defines no usable function)
    batch: bool = False  # probe: the module defines the batch form
    problem: str = ""  # why the result was refused (too large, malformed)


def run_call(
    code: CodeType,
    function_name: str,
    requests: list[list[Any]],
    batch: bool,
    workdir: str,
    output_bytes: int,
    private_fds: tuple[int, ...],
    kwargs: dict[str, Any] | None = None,
) -> CallOutcome:
    """Fork, run the module and the function on ``requests`` there (the module only, for
    the probe: ``requests`` empty), and collect what came back. ``private_fds`` are the
    template's descriptors the fork must not keep (its channel to the zygote). ``kwargs``
    are passed to every call (``reward.kwargs``)."""
    os.mkdir(workdir, 0o700)
    out_r, out_w = os.pipe()
    res_r, res_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the call: never returns
        try:
            for fd in (out_r, res_r, *private_fds):
                os.close(fd)
            os.dup2(out_w, 1)
            os.dup2(out_w, 2)
            os.close(out_w)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            os.chdir(workdir)
            os.environ["HOME"] = os.environ["TMPDIR"] = workdir
            message = _run_user_code(code, function_name, requests, batch, kwargs or {})
            _flush_std()
            data = (json.dumps(message, allow_nan=False) + "\n").encode()
            view = memoryview(data)
            while view:
                view = view[os.write(res_w, view) :]
        except BaseException:
            os._exit(70)
        os._exit(0)
    os.close(out_w)
    os.close(res_w)
    try:
        status, output, dropped, raw, overflow = _collect(pid, out_r, res_r, output_bytes)
    finally:
        os.close(out_r)
        os.close(res_r)
    text = output.decode("utf-8", errors="replace")
    if overflow:
        return CallOutcome(
            status, text, dropped, None, problem=f"result larger than {MAX_CALL_RESULT_BYTES} bytes"
        )
    return _read_result(status, text, dropped, raw, len(requests))


def _read_result(status: int, output: str, dropped: int, raw: bytes, count: int) -> CallOutcome:
    """Parse and re-validate what the fork wrote. Any failure (malformed, deeply nested,
    wrong shape) is the call's own problem, never the template's."""
    outcome = CallOutcome(status, output, dropped, None)
    # The harness writes its line last, after the user's code returned: whatever that code
    # wrote on the pipe before (it holds the descriptor) is ignored.
    last = raw.rstrip(b"\n").rpartition(b"\n")[2]
    if not last:
        return outcome
    try:
        message = json.loads(last)
        if not isinstance(message, dict):
            raise ValueError("not an object")
        if "load_error" in message:
            error = message["load_error"]
            outcome.load_error = error if isinstance(error, str) else "invalid load error"
            if output.strip():
                outcome.load_error += "\n" + output.strip()[-LOAD_ERROR_OUTPUT_CHARS:]
            return outcome
        if count == 0:  # the probe: only "batch" is expected
            if not isinstance(message.get("batch"), bool):
                raise ValueError("no batch flag")
            outcome.batch = message["batch"] is True
            outcome.results = []
            return outcome
        values = message.get("v")
        if not isinstance(values, list) or len(values) != count:
            raise ValueError("wrong number of results")
        outcome.results = [validate_wire(v) for v in values]
    except (ValueError, TypeError, RecursionError, MemoryError, OverflowError):
        outcome.results = None
        outcome.problem = "malformed result from the call"
    return outcome


def _collect(
    pid: int, out_r: int, res_r: int, output_bytes: int
) -> tuple[int, bytearray, int, bytes, bool]:
    """Read the fork's output and result until it exits; then, as pid 1 of the namespace,
    kill whatever it left behind and read what is left (every writer is dead: this ends)."""
    output, result = bytearray(), bytearray()
    dropped, overflow = 0, False

    def read_output() -> bool:
        nonlocal dropped
        try:
            chunk = os.read(out_r, 1 << 16)
        except BlockingIOError:
            return False
        room = max(0, output_bytes - len(output))
        output.extend(chunk[:room])
        dropped += len(chunk) - min(room, len(chunk))
        return bool(chunk)

    def read_result() -> bool:
        nonlocal overflow
        try:
            chunk = os.read(res_r, 1 << 16)
        except BlockingIOError:
            return False
        if len(result) + len(chunk) > MAX_CALL_RESULT_BYTES:
            overflow = True
            result.clear()
        if not overflow:
            result.extend(chunk)
        return bool(chunk)

    os.set_blocking(out_r, False)
    os.set_blocking(res_r, False)
    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    poller.register(out_r, select.POLLIN)
    poller.register(res_r, select.POLLIN)
    poller.register(pidfd, select.POLLIN)
    readers = {out_r: read_output, res_r: read_result}
    try:
        while True:
            events = dict(poller.poll())
            if pidfd in events:
                break
            for fd, reader in list(readers.items()):
                if fd in events and not reader():
                    poller.unregister(fd)
                    del readers[fd]
    finally:
        os.close(pidfd)
    status = 0
    if os.getpid() == 1:  # nothing else in our namespace may survive the call
        with contextlib.suppress(OSError):
            os.kill(-1, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            while True:
                reaped, st = os.waitpid(-1, 0)
                if reaped == pid:
                    status = st
    else:
        _, status = os.waitpid(pid, 0)
    while read_output():
        pass
    while read_result():
        pass
    return status, output, dropped, bytes(result), overflow


def _run_user_code(
    code: CodeType,
    function_name: str,
    requests: list[list[Any]],
    batch: bool,
    kwargs: dict[str, Any],
) -> dict[str, Any]:
    """In the fork: run the module, find the function, call it. The probe (no requests)
    only loads the module and says whether it has the batch form."""
    namespace: dict[str, Any] = {
        "__name__": "reward_module",
        "__file__": FILENAME,
        "__builtins__": builtins,
    }
    try:
        exec(code, namespace)
        fn, batch_fn = find_reward(namespace, function_name)
    except RewardCodeError as exc:
        return {"load_error": str(exc)}
    except BaseException as exc:
        _print_traceback()
        return {
            "load_error": "the reward code raised while loading: "
            + describe_exception(exc, FILENAME)
        }
    if not requests:
        return {"batch": batch_fn is not None}
    return {"v": _call(fn, batch_fn, requests, batch, kwargs)}


def _call(
    fn: Any, batch_fn: Any, requests: list[list[Any]], batch: bool, kwargs: dict[str, Any]
) -> list[dict[str, Any]]:
    try:
        if batch and batch_fn is not None:
            columns = {name: [r[i] for r in requests] for i, name in enumerate(BATCH_ARGS)}
            values = batch_fn(**columns, **kwargs)
            problem = batch_length_problem(values, len(requests))
            if problem:
                return [wire_error(problem)] * len(requests)
            return [wire_from_return(v) for v in values]
        (request,) = requests
        arguments = dict(zip(SINGLE_ARGS, request, strict=True))
        return [wire_from_return(fn(**arguments, **kwargs))]
    except BaseException as exc:
        _print_traceback()
        return [wire_error(call_error(exc, FILENAME))] * len(requests)


def _flush_std() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()


def _print_traceback() -> None:
    """The traceback, as the user's code sees it: only its own frames (never a path of
    the sandbox's code), each with its source line."""
    # The user's code may have closed or replaced sys.stderr: never fail because of it.
    with contextlib.suppress(BaseException):
        exc = sys.exc_info()[1]
        if exc is None:
            return
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == FILENAME]
        text = "".join(traceback.format_list(frames)) + "".join(
            traceback.format_exception_only(type(exc), exc)
        )
        sys.stderr.write("Traceback (most recent call last):\n" + text)

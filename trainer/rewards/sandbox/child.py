"""The sandboxed side: harden a template process, load the user's code, fork per request.

The template is forked (via a one-shot helper) from the warm zygote for each chunk of
requests and is pid 1 of its own PID namespace, still root on entry. Order matters:
descriptors and rlimits first (root may set any limit), then the uid drop, then prctl
flags, Landlock and seccomp (which would forbid the earlier steps). The interpreter and
trusted modules were loaded by the zygote, so nothing here needs to read /root/.pyenv.
Each request then runs in a fresh fork of the template, so no call sees another's
state; after each, the template kills everything left in its namespace.
"""

from __future__ import annotations

import builtins
import contextlib
import gc
import json
import os
import resource
import select
import signal
import sys
import traceback
from types import CodeType
from typing import Any, NoReturn

from trainer.rewards.errors import RewardCodeError
from trainer.rewards.sandbox import hardening
from trainer.rewards.sandbox.values import wire_error, wire_from_return
from trainer.rewards.signature import BATCH_ARGS, SINGLE_ARGS, describe_exception, find_reward

SETUP_FAILED_EXIT = 71  # the child could not apply a protection the probe said works
FILENAME = "<reward>"
PROTECTIONS = (
    "unprivileged_uid",
    "network_namespace",
    "pid_namespace",
    "private_scratch_tmpfs",
    "rlimits",
    "no_new_privs",
    "not_dumpable",
    "landlock_filesystem",
    "landlock_network",
    "landlock_signal_scope",
    "seccomp",
)


class ChildPlan:
    """Everything the zygote prepares once and each template applies."""

    def __init__(
        self,
        *,
        code: CodeType,
        function_name: str,
        uid: int,
        gid: int,
        rlimits: dict[int, int],
        memory_bytes: int,
        output_bytes: int,
        read_rules: list[tuple[int, int]],
        landlock_abi: int,
        seccomp: bytes,
        devnull_fd: int,
        expected: dict[str, bool],
    ) -> None:
        self.code = code
        self.function_name = function_name
        self.uid, self.gid = uid, gid
        self.rlimits = rlimits  # resource -> limit (soft = hard); RLIMIT_AS is added per child
        self.memory_bytes = memory_bytes
        self.output_bytes = output_bytes  # of each request's stdout+stderr, kept
        self.read_rules = read_rules  # (O_PATH fd, Landlock access) opened by the zygote
        self.landlock_abi = landlock_abi
        self.seccomp = seccomp
        self.devnull_fd = devnull_fd
        self.expected = expected  # protections the probe achieved: every template must too


def _harden(
    plan: ChildPlan, scratch: str, out_w: int, probe: bool, cpu_scale: int = 1
) -> dict[str, bool]:
    """Apply every protection; with ``probe`` record failures instead of exiting."""
    done: dict[str, bool] = {}
    root = os.geteuid() == 0

    def step(name: str, action: Any) -> None:
        if not probe and not plan.expected.get(name, False):
            return
        try:
            action()
            done[name] = True
        except OSError as exc:
            done[name] = False
            if not probe:
                os.write(2, f"sandbox setup failed: {name}: {exc}\n".encode())
                os._exit(SETUP_FAILED_EXIT)

    os.setsid()
    os.dup2(plan.devnull_fd, 0)
    os.dup2(out_w, 1)
    os.dup2(out_w, 2)
    os.chdir(scratch)
    done["pid_namespace"] = os.getpid() == 1
    if not probe and plan.expected.get("pid_namespace") and not done["pid_namespace"]:
        os.write(2, b"sandbox setup failed: pid_namespace\n")
        os._exit(SETUP_FAILED_EXIT)
    done["network_namespace"] = plan.expected.get("network_namespace", False)
    done["private_scratch_tmpfs"] = plan.expected.get("private_scratch_tmpfs", False)

    def set_rlimits() -> None:
        with open("/proc/self/statm", "rb") as f:
            vm_bytes = int(f.read().split()[0]) * resource.getpagesize()
        limits = dict(plan.rlimits)
        # A batch-form call scores the whole chunk: its CPU budget scales with it.
        limits[resource.RLIMIT_CPU] *= cpu_scale
        limits[resource.RLIMIT_AS] = vm_bytes + plan.memory_bytes * 5 // 4
        for which, value in limits.items():
            resource.setrlimit(which, (value, value))

    def drop_uid() -> None:
        if not root:
            raise OSError(1, "not root: cannot switch to an unprivileged uid")
        os.setgroups([])
        os.setgid(plan.gid)
        os.setuid(plan.uid)
        if os.getuid() == 0 or os.geteuid() == 0:
            raise OSError(1, "still root after setuid")

    step("rlimits", set_rlimits)
    step("unprivileged_uid", drop_uid)
    # After the uid change (which clears it): die with the helper, which dies with the zygote.
    hardening.prctl(hardening.PR_SET_PDEATHSIG, signal.SIGKILL)
    step("not_dumpable", lambda: hardening.prctl(hardening.PR_SET_DUMPABLE, 0))
    step("no_new_privs", lambda: hardening.prctl(hardening.PR_SET_NO_NEW_PRIVS, 1))

    def landlock() -> None:
        scratch_fd = os.open(scratch, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        rules = [*plan.read_rules, (scratch_fd, hardening.SCRATCH_ACCESS)]
        hardening.landlock_restrict(rules, plan.landlock_abi)
        os.close(scratch_fd)

    step("landlock_filesystem", landlock)
    done["landlock_network"] = done.get("landlock_filesystem", False) and plan.landlock_abi >= 4
    done["landlock_signal_scope"] = (
        done.get("landlock_filesystem", False) and plan.landlock_abi >= 6
    )
    step("seccomp", lambda: hardening.install_seccomp(plan.seccomp))
    return done


def _clean_process(keep: tuple[int, ...], scratch: str) -> None:
    low = 3
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 16)
    _set_env(scratch)


def _set_env(scratch: str) -> None:
    os.environ.clear()
    os.environ.update(
        {"HOME": scratch, "TMPDIR": scratch, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    )


class _Channel:
    """JSON lines to the zygote, written with functions bound before user code runs."""

    def __init__(self, fd: int) -> None:
        self.fd, self._write, self._dumps = fd, os.write, json.dumps

    def send(self, **message: Any) -> None:
        view = memoryview((self._dumps(message, allow_nan=False) + "\n").encode())
        while view:
            view = view[self._write(self.fd, view) :]


def run_template(
    plan: ChildPlan,
    requests: list[list[Any]],
    batch: bool,
    scratch: str,
    out_w: int,
    result_w: int,
    probe: bool,
) -> NoReturn:
    """The per-chunk template process: harden, load the user's code once, then run each
    request (the whole chunk for the batch form) in a fresh fork, one after the other."""
    exit_now = os._exit
    try:
        achieved = _harden(plan, scratch, out_w, probe, len(requests) if batch else 1)
        _clean_process((result_w,), scratch)
        channel = _Channel(result_w)
        loaded = _load(plan, channel)
        if loaded is None:
            exit_now(0)
        if probe:
            channel.send(
                k="probe",
                batch=loaded[1] is not None,
                isolation={k: achieved.get(k, False) for k in PROTECTIONS},
            )
            exit_now(0)
        channel.send(k="ready", batch=loaded[1] is not None)
        units = [list(range(len(requests)))] if batch else [[i] for i in range(len(requests))]
        for number, indices in enumerate(units):
            channel.send(k="start", i=number)
            status, output, dropped = _fork_call(
                loaded,
                [requests[i] for i in indices],
                batch,
                number,
                scratch,
                channel,
                plan.output_bytes,
            )
            channel.send(k="exit", i=number, s=status, o=output, d=dropped)
    except BaseException:
        exit_now(70)
    exit_now(0)


Loaded = tuple[Any, Any]  # (per-sample function or None, batch function or None)


def _load(plan: ChildPlan, channel: _Channel) -> Loaded | None:
    namespace: dict[str, Any] = {
        "__name__": "reward_module",
        "__file__": FILENAME,
        "__builtins__": builtins,
    }
    try:
        exec(plan.code, namespace)
        loaded = find_reward(namespace, plan.function_name)
        gc.freeze()  # each request's fork then leaves the module's objects alone
        return loaded
    except RewardCodeError as exc:
        channel.send(k="load_error", msg=str(exc))
    except BaseException as exc:
        _print_traceback()
        channel.send(
            k="load_error",
            msg="the reward code raised while loading: " + describe_exception(exc, FILENAME),
        )
    return None


def _fork_call(
    loaded: Loaded,
    requests: list[list[Any]],
    batch: bool,
    number: int,
    scratch: str,
    channel: _Channel,
    output_bytes: int,
) -> tuple[int, str, int]:
    """Run one unit in a fresh fork and collect its output; afterwards, as pid 1 of the
    namespace, kill whatever it left behind. Returns (wait status, output, bytes dropped)."""
    workdir = os.path.join(scratch, f"r{number}")
    os.mkdir(workdir, 0o700)
    out_r, out_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(out_w, 1)
            os.dup2(out_w, 2)
            os.close(out_r)
            os.close(out_w)
            os.chdir(workdir)
            os.environ["HOME"] = os.environ["TMPDIR"] = workdir
            channel.send(k="result", i=number, v=_call(loaded, requests, batch))
            _flush_std()
        except BaseException:
            os._exit(70)
        os._exit(0)
    os.close(out_w)
    output = bytearray()
    dropped = 0

    def read_some() -> bool:
        nonlocal dropped
        try:
            chunk = os.read(out_r, 1 << 16)
        except BlockingIOError:
            return False
        room = max(0, output_bytes - len(output))
        output.extend(chunk[:room])
        dropped += len(chunk) - min(room, len(chunk))
        return bool(chunk)

    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    poller.register(out_r, select.POLLIN)
    poller.register(pidfd, select.POLLIN)
    open_output = True
    while True:
        events = dict(poller.poll())
        if pidfd in events:
            break
        if out_r in events and open_output and not read_some():
            poller.unregister(out_r)
            open_output = False
    os.close(pidfd)
    status = 0
    if os.getpid() == 1:  # pid 1 of our namespace: nothing else in it may survive the call
        with contextlib.suppress(OSError):
            os.kill(-1, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            while True:
                reaped, st = os.waitpid(-1, 0)
                if reaped == pid:
                    status = st
        while read_some():  # every writer is dead now: this ends at end of file
            pass
    else:
        _, status = os.waitpid(pid, 0)
        os.set_blocking(out_r, False)
        while read_some():
            pass
    os.close(out_r)
    return status, output.decode("utf-8", errors="replace"), dropped


def _flush_std() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()


def _call(loaded: Loaded, requests: list[list[Any]], batch: bool) -> list[dict[str, Any]]:
    fn, batch_fn = loaded
    try:
        if batch and batch_fn is not None:
            columns = {name: [r[i] for r in requests] for i, name in enumerate(BATCH_ARGS)}
            values = batch_fn(**columns)
            if not isinstance(values, (list, tuple)) or len(values) != len(requests):
                got = (
                    f"{len(values)} values"
                    if isinstance(values, (list, tuple))
                    else (type(values).__name__)
                )
                reason = (
                    f"invalid return: the batch function returned {got} for "
                    f"{len(requests)} requests; return a list, one reward per request"
                )
                return [wire_error(reason)] * len(requests)
            return [wire_from_return(v) for v in values]
        (request,) = requests
        return [wire_from_return(fn(**dict(zip(SINGLE_ARGS, request, strict=True))))]
    except BaseException as exc:
        _print_traceback()
        return [wire_error(f"exception: {describe_exception(exc, FILENAME)}")] * len(requests)


def _print_traceback() -> None:
    # The user's code may have closed or replaced sys.stderr: never fail because of it.
    with contextlib.suppress(BaseException):
        traceback.print_exc()

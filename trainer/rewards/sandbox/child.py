"""The sandboxed side: harden a template process, then fork a fresh call per request.

The template is forked (via a one-shot helper) from the warm zygote for each chunk of
requests and is pid 1 of its own PID namespace, still root on entry. Order matters:
descriptors and rlimits first (root may set any limit), then the uid drop, then prctl
flags, Landlock and seccomp (which would forbid the earlier steps). The interpreter and
trusted modules were loaded by the zygote, so nothing here needs to read /root/.pyenv.

The template never runs user code: each request (the whole chunk for a whole batch call)
runs the module and the function in a fresh fork (see `call`), so no call sees
another's state, and only the template, whose code is ours, writes to the zygote.
After each call the template kills everything left in its namespace.
"""

from __future__ import annotations

import json
import os
import resource
import select
import signal
from types import CodeType
from typing import Any, NoReturn

from trainer.rewards.sandbox import hardening
from trainer.rewards.sandbox.call import FILENAME, CallOutcome, run_call
from trainer.rewards.sandbox.proctree import describe_status
from trainer.rewards.sandbox.values import wire_error

__all__ = [
    "FILENAME",
    "PROTECTIONS",
    "SETUP_FAILED_EXIT",
    "CallForm",
    "ChildPlan",
    "run_template",
]

SETUP_FAILED_EXIT = 71  # the child could not apply a protection the probe said works
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


class CallForm:
    """How a chunk's rows are called: ``batch``, the batch function (else the per-sample
    one); ``whole``, one call for the whole chunk (else one call per row, a batch of
    one for the batch function: the fallback after a whole call failed). ``cpu_scale``
    multiplies the per-call RLIMIT_CPU (a whole call's time limit covers its rows)."""

    def __init__(self, batch: bool, whole: bool, cpu_scale: int = 1) -> None:
        self.batch, self.whole, self.cpu_scale = batch, whole, cpu_scale


class ChildPlan:
    """Everything the zygote prepares once and each template applies."""

    def __init__(
        self,
        *,
        code: CodeType,
        function_name: str,
        kwargs: dict[str, Any],
        uid: int,
        gid: int,
        user_namespace: bool,
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
        self.kwargs = kwargs  # reward.kwargs: passed to every call
        self.uid, self.gid = uid, gid
        # Unprivileged zygote in a user namespace: children keep its (unprivileged) ids
        # and shed the capabilities the namespace gave it instead of switching uid.
        self.user_namespace = user_namespace
        self.rlimits = rlimits  # resource -> limit (soft = hard); RLIMIT_AS is added per child
        self.memory_bytes = memory_bytes
        self.output_bytes = output_bytes  # of each request's stdout+stderr, kept
        self.read_rules = read_rules  # (O_PATH fd, Landlock access) opened by the zygote
        self.landlock_abi = landlock_abi
        self.seccomp = seccomp
        self.devnull_fd = devnull_fd
        self.expected = expected  # protections the probe achieved: every template must too


def _harden(
    plan: ChildPlan, scratch: str, out_w: int, lifeline_r: int, probe: bool, cpu_scale: int = 1
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
        if plan.user_namespace:
            hardening.drop_capabilities()
            return
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
    if parent_gone(lifeline_r):  # it died before the signal was set: nobody watches us
        os._exit(SETUP_FAILED_EXIT)
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


def parent_gone(lifeline_r: int) -> bool:
    """Whether the helper that forked us has exited: the pipe's only writer was the
    helper, so its read end hangs up once the helper is gone."""
    poller = select.poll()
    poller.register(lifeline_r, select.POLLIN)
    return any(event & select.POLLHUP for _, event in poller.poll(0))


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
    """JSON lines to the zygote. Only the template writes here; no call holds it."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def send(self, **message: Any) -> None:
        view = memoryview((json.dumps(message, allow_nan=False) + "\n").encode())
        while view:
            view = view[os.write(self.fd, view) :]


def run_template(
    plan: ChildPlan,
    requests: list[list[Any]],
    form: CallForm,
    scratch: str,
    out_w: int,
    result_w: int,
    lifeline_r: int,
    probe: bool,
) -> NoReturn:
    """The per-chunk template process: harden, then run each request (the whole chunk for
    a whole batch call) in a fresh fork, one after the other; the probe loads the module
    once."""
    try:
        achieved = _harden(plan, scratch, out_w, lifeline_r, probe, form.cpu_scale)
        # pid 1 only gets the signals it has a handler for: leave it none a call could send.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        _clean_process((result_w,), scratch)
        channel = _Channel(result_w)
        if probe:
            loaded = _run(plan, [], False, scratch, 0, result_w)
            if loaded.load_error or loaded.results is None:
                channel.send(k="load_error", msg=loaded.load_error or _no_result(loaded))
            else:
                channel.send(
                    k="probe",
                    batch=loaded.batch,
                    isolation={k: achieved.get(k, False) for k in PROTECTIONS},
                )
            os._exit(0)
        channel.send(k="ready")
        whole = form.batch and form.whole
        units = [list(range(len(requests)))] if whole else [[i] for i in range(len(requests))]
        for number, indices in enumerate(units):
            channel.send(k="start", i=number)
            rows = [requests[i] for i in indices]
            call = _run(plan, rows, form.batch, scratch, number, result_w)
            if call.load_error:
                channel.send(k="result", i=number, v=[wire_error(call.load_error)] * len(indices))
            elif call.results is not None:
                channel.send(k="result", i=number, v=call.results)
            channel.send(
                k="exit", i=number, s=call.status, o=call.output, d=call.dropped, p=call.problem
            )
    except BaseException:
        os._exit(70)
    os._exit(0)


def _run(
    plan: ChildPlan,
    requests: list[list[Any]],
    batch: bool,
    scratch: str,
    number: int,
    result_w: int,
) -> CallOutcome:
    return run_call(
        plan.code,
        plan.function_name,
        requests,
        batch,
        os.path.join(scratch, f"r{number}"),
        plan.output_bytes,
        (result_w,),
        plan.kwargs,
    )


def _no_result(call: CallOutcome) -> str:
    why = call.problem or describe_status(call.status)
    return f"loading the reward code failed: {why}" + (
        f"\n{call.output.strip()[-2000:]}" if call.output.strip() else ""
    )

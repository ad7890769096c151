"""Run child processes so that none outlives the supervisor.

Each child gets its own process group (signals to the group reach its forks),
a parent-death signal (if the supervisor is SIGKILLed, the kernel signals the
child), and the supervisor registers as a child subreaper, so grandchildren
whose parents die (Ray's daemons, uvicorn and Celery forks) re-parent to it
and can be found, killed and reaped by the final sweep.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pwd
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import psutil

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
STOP_BUDGET_S = 12.0
POLL_S = 0.2


class UpError(Exception):
    """A problem the user can fix; the message is one line: what is wrong and the fix."""


class StopRequested(Exception):
    """Ctrl-C or SIGTERM arrived: unwind and stop every child."""


def _prctl(option: int, value: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return int(libc.prctl(option, value, 0, 0, 0)) == 0


def become_subreaper() -> bool:
    """Orphaned descendants re-parent to this process instead of init (Linux only)."""
    return _prctl(PR_SET_CHILD_SUBREAPER, 1)


@dataclass
class ChildSpec:
    name: str  # what the user reads in messages: "postgres", "celery worker"
    argv: list[str]
    env: dict[str, str]
    cwd: Path
    log_path: Path | None = None  # None: share the supervisor's stdout/stderr
    stop_signal: int = signal.SIGTERM  # the child's graceful-shutdown signal
    tier: int = 2  # stopped from the highest tier down: 2 apps, 1 Ray, 0 data stores
    grace_s: float = 5.0  # wait this long after stop_signal before SIGKILL
    user: str | None = None  # run as this OS user (Postgres refuses to run as root)


@dataclass
class Child:
    spec: ChildSpec
    popen: subprocess.Popen[bytes]
    started: float = field(default_factory=time.monotonic)
    log_start: int = 0  # where this start's output begins in its (appended) log

    def logged(self, text: str) -> bool:
        """Whether this start of the child has written `text` to its log yet."""
        path = self.spec.log_path
        if path is None:
            return False
        try:
            with path.open("rb") as handle:
                handle.seek(self.log_start)
                return text in handle.read().decode(errors="replace")
        except OSError:
            return False

    @property
    def pid(self) -> int:
        return self.popen.pid

    def running(self) -> bool:
        return self.popen.poll() is None

    def log_hint(self) -> str:
        """'; see <log> (last line: ...)' for an error message, or '' without a log."""
        path = self.spec.log_path
        if path is None:
            return ""
        last = last_line(path)
        return f"; see {path}" + (f" (last line: {last})" if last else "")


def last_line(path: Path, limit: int = 200) -> str:
    try:
        with path.open("rb") as handle:
            handle.seek(max(0, path.stat().st_size - 8192))
            lines = [ln.strip() for ln in handle.read().decode(errors="replace").splitlines()]
    except OSError:
        return ""
    lines = [ln for ln in lines if ln and not ln.startswith("=== rlstudio")]
    return lines[-1][:limit] if lines else ""


def _preexec(parent_pid: int, death_signal: int, user: str | None) -> Callable[[], None]:
    account = pwd.getpwnam(user) if user else None

    def run() -> None:
        if account is not None:
            os.setgroups([])
            os.setgid(account.pw_gid)
            os.setuid(account.pw_uid)
            os.umask(0o077)  # what a service writes as its own account is not for others
        # Set after any uid change: changing credentials clears the death signal.
        _prctl(PR_SET_PDEATHSIG, death_signal)
        if os.getppid() != parent_pid:  # the supervisor died before prctl took effect
            os._exit(1)

    return run


class Supervisor:
    def __init__(self) -> None:
        self.children: list[Child] = []
        self.services: list[Child] = []  # long-running: one exiting is an error
        self.stop_signal: int | None = None
        self._hurry = False

    # -- signals -------------------------------------------------------------------
    def install_signal_handlers(self) -> None:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, _frame: object) -> None:
        if self.stop_signal is not None:
            self._hurry = True  # a second Ctrl-C: skip the graceful waits
        self.stop_signal = signum

    def check_stop(self) -> None:
        if self.stop_signal is not None:
            raise StopRequested()

    # -- starting ------------------------------------------------------------------
    def start(self, spec: ChildSpec, *, service: bool = True) -> Child:
        self.check_stop()
        log: BinaryIO | None = None
        log_start = 0
        if spec.log_path is not None:
            spec.log_path.parent.mkdir(parents=True, exist_ok=True)
            log = spec.log_path.open("ab")
            stamp = time.strftime("%Y-%m-%d %H:%M:%S")
            log.write(f"=== rlstudio up {stamp}: {' '.join(spec.argv)}\n".encode())
            log.flush()
            log_start = log.tell()
        try:
            popen = subprocess.Popen(
                spec.argv,
                env=spec.env,
                cwd=spec.cwd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT if log is not None else None,
                start_new_session=True,  # own process group; Ctrl-C reaches only us
                preexec_fn=_preexec(os.getpid(), spec.stop_signal, spec.user),
            )
        except FileNotFoundError as exc:
            raise UpError(
                f"{spec.name}: {exc.filename} is missing; reinstall with `make install`"
            ) from None
        finally:
            if log is not None:
                log.close()
        child = Child(spec, popen, log_start=log_start)
        self.children.append(child)
        if service:
            self.services.append(child)
        return child

    def run_once(self, spec: ChildSpec, timeout_s: float) -> None:
        """Run a one-shot step (migrate, seed) under supervision; raise UpError if it fails."""
        child = self.start(spec, service=False)
        deadline = time.monotonic() + timeout_s
        while child.running():
            self.tick()
            if time.monotonic() > deadline:
                raise UpError(f"{spec.name} took over {timeout_s:.0f} s{child.log_hint()}")
            time.sleep(POLL_S)
        self.children.remove(child)
        if child.popen.returncode != 0:
            raise UpError(
                f"{spec.name} failed (exit code {child.popen.returncode}){child.log_hint()}"
            )

    # -- watching ------------------------------------------------------------------
    def tick(self) -> None:
        """Reap orphans, honour a stop request, and fail if a service child has exited."""
        self.reap_orphans()
        self.check_stop()
        for child in self.services:
            if not child.running():
                raise UpError(
                    f"{child.spec.name} exited unexpectedly (exit code "
                    f"{child.popen.returncode}){child.log_hint()}"
                )

    def wait_until(
        self, ready: Callable[[], bool], what: str, timeout_s: float, owner: Child | None
    ) -> None:
        """Poll `ready` while watching every service; `owner`'s log is named on timeout."""
        deadline = time.monotonic() + timeout_s
        while not ready():
            self.tick()
            if time.monotonic() > deadline:
                hint = owner.log_hint() if owner is not None else ""
                raise UpError(f"{what} was not ready after {timeout_s:.0f} s{hint}")
            time.sleep(POLL_S)

    def reap_orphans(self) -> None:
        """Collect exited descendants that re-parented to us; our own children via Popen."""
        by_pid = {child.pid: child for child in self.children}
        for _ in range(1000):
            try:
                info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return
            if info is None:
                return
            managed = by_pid.get(info.si_pid)
            if managed is not None:
                if managed.popen.returncode is not None:
                    return
                managed.popen.poll()
            else:
                try:
                    os.waitpid(info.si_pid, os.WNOHANG)
                except ChildProcessError:
                    return

    # -- stopping ------------------------------------------------------------------
    def stop_all(self) -> None:
        """Stop children tier by tier (apps, Ray, data stores), then sweep every descendant."""
        deadline = time.monotonic() + STOP_BUDGET_S
        for tier in sorted({child.spec.tier for child in self.children}, reverse=True):
            group = [child for child in self.children if child.spec.tier == tier]
            tier_started = time.monotonic()
            for child in group:
                if child.running():
                    _signal_pid(child.pid, child.spec.stop_signal)
            tier_deadline = min(deadline, time.monotonic() + max(c.spec.grace_s for c in group))
            while any(child.running() for child in group) and not self._hurry:
                if time.monotonic() > tier_deadline:
                    break
                self.reap_orphans()
                time.sleep(0.05)
            for child in group:  # the leader may be gone while its forks linger
                _signal_group(child.pid, signal.SIGKILL)
            names = ", ".join(child.spec.name for child in group)
            print(f"  stopped {names} ({time.monotonic() - tier_started:.1f} s)", flush=True)
        self.sweep()

    def sweep(self) -> None:
        """SIGKILL and reap every remaining descendant, however deep."""
        for _ in range(20):
            try:
                rest = psutil.Process().children(recursive=True)
            except psutil.Error:
                rest = []
            for proc in rest:
                with contextlib.suppress(psutil.Error):
                    proc.kill()
            for child in self.children:
                if child.running():
                    child.popen.kill()
            time.sleep(0.05)
            self.reap_orphans()
            for child in self.children:
                child.popen.poll()
            if not rest and not any(child.running() for child in self.children):
                return


def _signal_pid(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signum)


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)

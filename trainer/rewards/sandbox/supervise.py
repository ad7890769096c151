"""Run one sandboxed call from the zygote: fork, watch, kill, and read what came back.

The zygote forks a one-shot helper (root) that unshares a PID namespace and forks the
child, which becomes pid 1 there; when that child exits or is killed the kernel kills
everything it left behind, so no orphan survives a call. The helper waits for the child
and exits the same way (same signal or status), so the zygote sees the child's fate.
While the call runs the zygote enforces the wall-clock limit and an RSS watchdog over
the whole process tree, and drains the output pipe (keeping the first bytes only).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import time
from collections.abc import Callable
from typing import Any

from trainer.rewards.sandbox import hardening
from trainer.rewards.sandbox.proctree import anon_bytes, descendants, kill_tree, read_children

MAX_RESULT_BYTES = 4 * 1024 * 1024
WATCHDOG_FIRST_S = 0.01
WATCHDOG_EVERY_S = 0.02


def _drain(fd: int, keep: int, out: bytearray) -> tuple[int, bool, bool]:
    """Read up to 1 MiB of what is available, keeping ``keep`` bytes in ``out``.
    Returns (bytes dropped, whether anything was read, end of file)."""
    dropped, got = 0, False
    for _ in range(16):
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return dropped, got, False
        if not chunk:
            return dropped, got, True
        got = True
        room = max(0, keep - len(out))
        out += chunk[:room]
        dropped += len(chunk) - min(room, len(chunk))
    return dropped, got, False


def _drain_all(fd: int, keep: int, out: bytearray) -> int:
    total = 0
    while True:
        dropped, got, eof = _drain(fd, keep, out)
        total += dropped
        if eof or not got:
            return total


class Unit:
    """What the zygote saw of one unit of work (a request, or a chunk for the batch form)."""

    def __init__(self) -> None:
        self.status: int | None = None  # os.waitpid status of the fork that ran it
        self.killed = ""  # why the zygote killed it
        self.problem = ""  # why the template refused its result (too large, malformed)
        self.started = 0.0
        self.result: Any = None  # the "v" the child sent (validated later)
        self.output = bytearray()
        self.output_dropped = 0
        self.elapsed_s = 0.0


class Outcome:
    def __init__(self, units: list[Unit]) -> None:
        self.units = units
        self.template_status = 0  # how the template (pid 1) ended, mirrored by the helper
        self.killed = ""  # why the zygote killed the whole template, if it did
        self.messages: list[dict[str, Any]] = []  # ready / probe / load_error lines
        self.output = bytearray()  # printed outside any unit (module-level code)


def run_chunk(
    start_template: Callable[[int, int, int], None],
    units: int,
    *,
    unit_timeout_s: float,
    load_timeout_s: float,
    memory_bytes: int,
    output_bytes: int,
    use_pid_namespace: bool,
    protocol_fds: tuple[int, int],
) -> Outcome:
    """Fork the helper, which forks the template running
    ``start_template(out_w, result_w, lifeline_r)``, and supervise it until it ends.

    ``lifeline_r`` reads a pipe only the helper writes to: the template checks it once
    its parent-death signal is set (`child.parent_gone`), since a helper killed before
    then would leave it running with nobody watching."""
    out_r, out_w = os.pipe()
    res_r, res_w = os.pipe()
    zygote_pid = os.getpid()
    base = anon_bytes(zygote_pid)
    pid = os.fork()
    if pid == 0:  # the helper
        try:
            for fd in (out_r, res_r, *protocol_fds):
                os.close(fd)
            hardening.prctl(hardening.PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != zygote_pid:
                os._exit(1)
            if use_pid_namespace:
                # On failure the template is not pid 1: the probe reports it, and a
                # template that expected it refuses to run.
                with contextlib.suppress(OSError):
                    hardening.unshare(hardening.CLONE_NEWPID)
            lifeline_r, lifeline_w = os.pipe()
            template = os.fork()
            if template == 0:
                os.close(lifeline_w)
                start_template(out_w, res_w, lifeline_r)  # never returns
            for fd in (out_w, res_w, lifeline_r):
                os.close(fd)
            _, status = os.waitpid(template, 0)
            if os.WIFSIGNALED(status):
                signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
                os.kill(os.getpid(), os.WTERMSIG(status))
            os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 70)
        except BaseException:
            os._exit(70)
    for fd in (out_w, res_w):
        os.close(fd)
    watch = _Watch(
        pid,
        out_r,
        res_r,
        units,
        unit_timeout_s,
        load_timeout_s,
        memory_bytes,
        output_bytes,
        base,
        protocol_fds[0],
    )
    try:
        return watch.run()
    finally:
        for fd in (out_r, res_r):
            os.close(fd)


class _Watch:
    """The zygote's side of one chunk: read the template's JSON lines, time each unit,
    watch memory, kill what overstays, and attribute output to units."""

    def __init__(
        self,
        pid: int,
        out_r: int,
        res_r: int,
        units: int,
        unit_timeout_s: float,
        load_timeout_s: float,
        memory_bytes: int,
        output_bytes: int,
        base: int,
        protocol_fd: int,
    ) -> None:
        self.pid, self.out_r, self.res_r = pid, out_r, res_r
        self.unit_timeout_s, self.load_timeout_s = unit_timeout_s, load_timeout_s
        self.memory_bytes, self.output_bytes, self.base = memory_bytes, output_bytes, base
        self.protocol_fd = protocol_fd
        self.outcome = Outcome(units=[Unit() for _ in range(units)])
        self.lines = bytearray()
        self.current: int | None = None
        self.started = time.monotonic()
        self.deadline = self.started + load_timeout_s
        self.next_check = self.started + WATCHDOG_FIRST_S

    def run(self) -> Outcome:
        os.set_blocking(self.out_r, False)
        os.set_blocking(self.res_r, False)
        pidfd = os.pidfd_open(self.pid)
        poller = select.poll()
        for fd in (self.out_r, self.res_r, pidfd):
            poller.register(fd, select.POLLIN)
        poller.register(self.protocol_fd, 0)  # POLLHUP only: the pool went away
        exited = False
        try:
            while not exited:
                wait_ms = max(0.0, min(self.deadline, self.next_check) - time.monotonic()) * 1000
                for fd, _ in poller.poll(wait_ms):
                    if fd == pidfd:
                        exited = True
                    elif fd == self.protocol_fd:
                        poller.unregister(fd)
                        self._kill(everything=True, reason="the pool closed")
                    elif fd == self.out_r:
                        if self._read_output():
                            poller.unregister(fd)
                    elif self._read_lines():
                        poller.unregister(fd)
                if not exited:
                    self._enforce_limits()
            _, self.outcome.template_status = os.waitpid(self.pid, 0)
        finally:
            os.close(pidfd)
        # The namespace is gone once the helper is reaped: read what is left.
        self._read_output(everything=True)
        self._read_lines(everything=True)
        if self.current is not None:
            self._finish(self.current, None)
        return self.outcome

    def _sink(self) -> tuple[bytearray, Unit | None]:
        if self.current is None:
            return self.outcome.output, None
        unit = self.outcome.units[self.current]
        return unit.output, unit

    def _read_output(self, everything: bool = False) -> bool:
        buffer, unit = self._sink()
        dropped = _drain_all(self.out_r, self.output_bytes, buffer) if everything else None
        eof = False
        if dropped is None:
            dropped, _, eof = _drain(self.out_r, self.output_bytes, buffer)
        if unit is not None:
            unit.output_dropped += dropped
        return eof

    def _read_lines(self, everything: bool = False) -> bool:
        eof = False
        while True:
            _, got, eof = _drain(self.res_r, MAX_RESULT_BYTES, self.lines)
            while b"\n" in self.lines:
                line, _, rest = bytes(self.lines).partition(b"\n")
                self.lines[:] = rest
                self._handle(line)
            if len(self.lines) >= MAX_RESULT_BYTES:
                self.lines.clear()
                self._kill(everything=True, reason=f"result larger than {MAX_RESULT_BYTES} bytes")
            if eof or not got or not everything:
                return eof

    def _handle(self, line: bytes) -> None:
        """One line from the template. The template runs no user code, but everything is
        still checked and bounded here: a bad line is dropped, never an exception."""
        try:
            message = json.loads(line)
        except (ValueError, RecursionError, MemoryError):
            return
        if not isinstance(message, dict):
            return
        kind = message.get("k")
        number = _bounded_int(message.get("i"), len(self.outcome.units) - 1)
        if kind in ("ready", "probe", "load_error"):
            self.outcome.messages.append(message)
            self.deadline = time.monotonic() + self.load_timeout_s
        elif kind == "start" and number is not None and self.current is None:
            self.current = number
            self.outcome.units[number].started = time.monotonic()
            self.deadline = time.monotonic() + self.unit_timeout_s
        elif kind == "result" and number is not None and self.outcome.units[number].result is None:
            self.outcome.units[number].result = message.get("v")
        elif kind == "exit" and number is not None and number == self.current:
            unit = self.outcome.units[number]
            output, dropped, problem = message.get("o"), message.get("d"), message.get("p")
            if isinstance(output, str):
                unit.output += output.encode("utf-8", errors="replace")[: self.output_bytes]
            unit.output_dropped += _bounded_int(dropped, MAX_RESULT_BYTES << 10) or 0
            if isinstance(problem, str) and problem:
                unit.problem = problem[:300]
            status = message.get("s")
            self._finish(number, _bounded_int(status, 0xFFFF))
            self.deadline = time.monotonic() + self.load_timeout_s

    def _finish(self, number: int, status: int | None) -> None:
        self._read_output(everything=True)
        unit = self.outcome.units[number]
        unit.status = status if status is not None else self.outcome.template_status
        unit.elapsed_s = time.monotonic() - unit.started if unit.started else 0.0
        self.current = None

    def _enforce_limits(self) -> None:
        now = time.monotonic()
        if now >= self.deadline:
            stuck = self.current is not None and self.outcome.units[self.current].killed
            if self.current is None or stuck:
                self._kill(
                    everything=True,
                    reason=f"timeout: the sandbox did not respond "
                    f"within {self.load_timeout_s:g} s (loading the code or between calls)",
                )
            else:
                self._kill(
                    everything=False,
                    reason=f"timeout: the call ran longer than {self.unit_timeout_s:g} s",
                )
            self.deadline = now + 5.0  # give the kill time to land before trying again
        if now >= self.next_check:
            self.next_check = now + WATCHDOG_EVERY_S
            template = read_children(self.pid)
            if not template:
                return
            below = descendants(template[0])
            own = anon_bytes(template[0])
            template_used = max(0, own - self.base)  # the user's module, loaded once
            used = template_used + sum(max(0, anon_bytes(p) - own) for p in below)
            if used > self.memory_bytes:
                self._kill(
                    everything=not below or template_used > self.memory_bytes,
                    reason=(
                        f"memory: the call used {used >> 20} MiB, over the "
                        f"{self.memory_bytes >> 20} MiB limit"
                    ),
                )

    def _kill(self, everything: bool, reason: str) -> None:
        """Kill the running unit's processes (the template carries on), or everything."""
        if everything:
            self.outcome.killed = self.outcome.killed or reason
            kill_tree(self.pid)
            return
        unit = self.current
        if unit is not None and not self.outcome.units[unit].killed:
            self.outcome.units[unit].killed = reason
        template = read_children(self.pid)
        for _ in range(3):
            below = [p for t in template for p in descendants(t)]
            # The template may have moved on (the unit ended, or its first kill landed):
            # it sends the next unit's "start" before forking it, so lines read after
            # listing the processes tell whether the list may hold the next unit's.
            self._read_lines()
            if unit is not None and self.current != unit:
                break
            for p in below:
                with contextlib.suppress(OSError):
                    os.kill(p, signal.SIGKILL)
            if not below:
                break


def _bounded_int(value: Any, high: int) -> int | None:
    """``value`` when it is an int in [0, high] (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= high:
        return None
    return value

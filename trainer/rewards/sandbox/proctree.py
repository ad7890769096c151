"""The process tree of a sandboxed call, as the zygote sees it through /proc."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import time

_PAGE = os.sysconf("SC_PAGE_SIZE")


def read_children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                found.extend(int(x) for x in f.read().split())
        except (OSError, ValueError):
            continue
    return found


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (from /proc/<pid>/task/<tid>/children)."""
    out: list[int] = []
    stack = [pid]
    while stack and len(out) < 4096:
        children = read_children(stack.pop())
        out.extend(children)
        stack.extend(children)
    return out


def anon_bytes(pid: int) -> int:
    """Resident memory not backed by files (resident - shared pages) of one process."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            fields = f.read().split()
        return (int(fields[1]) - int(fields[2])) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def kill_tree(pid: int) -> None:
    # Children first (the namespace's pid 1 takes the rest with it), then the helper.
    for _ in range(3):
        below = descendants(pid)
        for p in below:
            with contextlib.suppress(OSError):
                os.kill(p, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        if not below:
            break


def process_state(pid: int) -> str:
    """The one-letter state of /proc/<pid>/stat ("R", "S", "D", "T", "Z", ...); "" when
    the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return ""
    # The command name may hold any byte, ")" too: the state follows the last ") ".
    state = stat.rfind(b")") + 2
    return stat[state : state + 1].decode("ascii", "replace")


def end_tree(root: int, *, stop_s: float = 2.0, exit_s: float = 10.0) -> list[int]:
    """Kill ``root`` and every process below it, and wait until each has exited.

    Killing a tree from the top orphans what is below (an orphan is re-parented out of
    reach, to init), and killing it from the bottom races the forks of the processes
    above. So the tree is frozen first, top-down: each process is stopped (SIGSTOP, which
    even a PID namespace's init takes from outside) and only once it is stopped are its
    children read, since a stopped process forks nothing and reaps nothing (no pid below
    it can be reused). Every process found is held by a pidfd, then all are killed at
    once and their pidfds waited on. Returns the pids that had not exited within the
    bounds (a process in uninterruptible sleep may take a while to die); empty normally.
    """
    held: dict[int, int] = {}  # pid -> pidfd
    stop_deadline = time.monotonic() + stop_s
    stack = [root]
    try:
        while stack:
            while stack:
                pid = stack.pop()
                if pid in held:
                    continue
                try:
                    held[pid] = os.pidfd_open(pid)
                    signal.pidfd_send_signal(held[pid], signal.SIGSTOP)
                except OSError:
                    continue  # already gone
                while process_state(pid) not in ("T", "t", "Z", "X", "") and (
                    time.monotonic() < stop_deadline
                ):
                    time.sleep(0.002)
                stack.extend(read_children(pid))
            # A process that exited before its stop re-parented its children to a
            # subreaper above it (the zygote is one) after that one's children were read:
            # read them all again until a pass finds nobody new.
            stack = [c for pid in list(held) for c in read_children(pid) if c not in held]
        for fd in held.values():
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(fd, signal.SIGKILL)
        return _wait_exited(held, exit_s)
    finally:
        for fd in held.values():
            os.close(fd)


def _wait_exited(held: dict[int, int], timeout_s: float) -> list[int]:
    """Wait until every pidfd in ``held`` reports its process exited (a pidfd polls
    readable then, for a child or not); the pids still running after ``timeout_s``."""
    poller = select.poll()
    waiting = {fd: pid for pid, fd in held.items()}
    for fd in waiting:
        poller.register(fd, select.POLLIN)
    deadline = time.monotonic() + timeout_s
    while waiting:
        left_ms = (deadline - time.monotonic()) * 1000
        if left_ms <= 0:
            break
        for fd, _ in poller.poll(left_ms):
            poller.unregister(fd)
            del waiting[fd]
    return sorted(waiting.values())


def reap_strays() -> list[int]:
    """Reap children that were re-parented to us (we are a subreaper); kill any alive."""
    found: list[int] = []
    for child in read_children(os.getpid()):
        with contextlib.suppress(OSError):
            os.kill(child, signal.SIGKILL)
        found.append(child)
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
    return found


def describe_status(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = "unknown"
        hints: dict[int, str] = {
            signal.SIGSEGV: " (segmentation fault)",
            signal.SIGXCPU: " (CPU time limit)",
            signal.SIGKILL: " (killed; it may have killed itself)",
            signal.SIGXFSZ: " (file size limit)",
            signal.SIGSYS: " (forbidden system call)",
        }
        hint = hints.get(sig, "")
        return f"crashed: killed by signal {sig} ({name}){hint}"
    code = os.waitstatus_to_exitcode(status)
    return f"crashed: exited with status {code} without a result"

"""The process tree of a sandboxed call, as the zygote sees it through /proc."""

from __future__ import annotations

import contextlib
import os
import signal

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

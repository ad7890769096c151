"""Shared helpers of the reward tests: sandbox processes, a one-line request maker, and
the mark for tests that need the sandbox's full isolation."""

from __future__ import annotations

import functools
import os
import time

import psutil
import pytest

from trainer.rewards import RewardRequest, isolation_report
from trainer.rewards.sandbox.zygote import NAMESPACE_ID, UID_BASE

NO_FULL_SANDBOX = "the sandbox's full isolation is not available on this host"


@functools.cache
def full_sandbox_here() -> bool:
    """Every protection works here: as root, or unprivileged through user namespaces."""
    return all(isolation_report().values())


def needs_full_sandbox() -> pytest.MarkDecorator:
    return pytest.mark.skipif(not full_sandbox_here(), reason=NO_FULL_SANDBOX)


def request(
    solution: str, ground_truth: object = None, data_source: str = "test", **extra_info: object
) -> RewardRequest:
    return RewardRequest(
        data_source=data_source,
        solution_str=solution,
        ground_truth=ground_truth,
        extra_info=dict(extra_info),
    )


def call_uid(worker_pid: int) -> int:
    """The uid reward code sees in a call of the worker whose zygote is `worker_pid`:
    under root one of its own; unprivileged, the id its user namespace maps."""
    return UID_BASE + worker_pid if os.geteuid() == 0 else NAMESPACE_ID


def _in_a_nested_pid_namespace(pid: int) -> bool:
    """/proc/<pid>/status lists the process's pid in each PID namespace it is in (readable
    even for a process that is not dumpable, as sandbox calls are)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            line = next((ln for ln in f if ln.startswith("NSpid:")), "NSpid:")
    except OSError:
        return False
    return len(line.split()) > 2


def sandbox_processes() -> list[psutil.Process]:
    """Processes of the sandbox (none may outlive a call): under root, those running as a
    sandbox uid (each worker has its own); unprivileged, our own uid's processes in a
    PID namespace other than ours (each call's; the warm zygotes stay in ours)."""
    own_uid = os.geteuid()
    found = []
    for proc in psutil.process_iter(["uids"]):
        uids = proc.info["uids"]
        if uids is None:
            continue
        sandbox_uid = max(uids.real, uids.effective) >= UID_BASE
        own_nested = own_uid != 0 and uids.real == own_uid
        if sandbox_uid or (own_nested and _in_a_nested_pid_namespace(proc.pid)):
            found.append(proc)
    return found


def wait_for_no_sandbox_processes(timeout_s: float = 3.0) -> list[psutil.Process]:
    deadline = time.monotonic() + timeout_s
    left = sandbox_processes()
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = sandbox_processes()
    return left


@pytest.fixture
def no_leftover_processes():
    yield
    assert wait_for_no_sandbox_processes() == []


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say loudly when sandbox tests were skipped (not root, say): a green run that never
    tried an attack proves nothing about the sandbox."""
    reasons: dict[str, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = report.longrepr
        reason = str(longrepr[2]) if isinstance(longrepr, tuple) else str(longrepr)
        if "sandbox" in reason.lower():
            reasons[reason] = reasons.get(reason, 0) + 1
    for reason, count in reasons.items():
        terminalreporter.write_line(
            f"!!! SANDBOX SUITES SKIPPED: {count} tests: {reason} !!!", red=True, bold=True
        )

"""Shared helpers of the reward tests: sandbox processes and a one-line request maker."""

from __future__ import annotations

import time

import psutil
import pytest

from trainer.rewards import RewardRequest
from trainer.rewards.sandbox.zygote import UID_BASE


def request(
    solution: str, ground_truth: object = None, data_source: str = "test", **extra_info: object
) -> RewardRequest:
    return RewardRequest(
        data_source=data_source,
        solution_str=solution,
        ground_truth=ground_truth,
        extra_info=dict(extra_info),
    )


def sandbox_processes() -> list[psutil.Process]:
    """Processes running as a sandbox uid (each worker has its own; none may outlive a
    call)."""
    found = []
    for proc in psutil.process_iter(["uids"]):
        uids = proc.info["uids"]
        if uids is not None and max(uids.real, uids.effective) >= UID_BASE:
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

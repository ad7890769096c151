"""Fixtures shared by every test folder."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import assets, crash_cores

REPO_ROOT = Path(__file__).resolve().parent.parent
SESSION_STARTED = time.time()  # cores older than this are an earlier run's


@pytest.fixture(scope="session")
def demo_assets() -> Path:
    """The offline demo model (`model/`) and toy datasets (`data/`): tests.assets."""
    return assets.demo_assets()


@pytest.fixture(scope="session")
def demo_reward_model(demo_assets: Path) -> Path:
    """The demo reward model on the cached demo model: tests.assets."""
    return assets.demo_reward_model(demo_assets)


@pytest.fixture(scope="session")
def demo_tools_assets(demo_assets: Path) -> Path:
    """The demo tools model (`model/`) and the tools-arith data (`data/tools-arith/`):
    tests.assets."""
    return assets.demo_tools_assets(demo_assets)


@pytest.fixture(scope="session", autouse=True)
def fast_password_hashing():
    """Hash test passwords with MD5 instead of PBKDF2. PBKDF2's million rounds cost ~0.33 s
    of CPU a password here and the studio tests create users for nearly every test; no test
    is about the hasher. Servers that tests start in subprocesses keep the real settings
    (they check tokens and their own users' passwords, never these)."""
    from django.conf import settings
    from django.test import override_settings

    hashers = ["django.contrib.auth.hashers.MD5PasswordHasher", *settings.PASSWORD_HASHERS]
    with override_settings(PASSWORD_HASHERS=hashers):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failing test's report gets gdb's reading of every core dumped since the run began
    and not read yet (tests.crash_cores: a crashed Ray worker's native stacks)."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if report.failed:
        for name, stacks in crash_cores.take_cores(SESSION_STARTED):
            report.sections.append((f"native stacks from {name}", stacks))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Cores no failing test took (a crash the test survived: a retried worker). Only in
    the process that prints: an xdist worker's summary goes nowhere (in CI one took a core
    there and nothing was shown)."""
    if hasattr(terminalreporter.config, "workerinput"):  # an xdist worker
        return
    for name, stacks in crash_cores.take_cores(SESSION_STARTED):
        terminalreporter.write_sep("=", f"a process dumped core during this run: {name}")
        terminalreporter.write_line(stacks)

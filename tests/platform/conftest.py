"""Helpers for tests that run the `rlstudio` command as a user would."""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from studio.platform.ports import port_free

RLSTUDIO = Path(sys.executable).parent / "rlstudio"


def free_ports(count: int, *, taken: set[int]) -> list[int]:
    """`count` consecutive free ports below the ephemeral range, none of them in `taken`."""
    for _ in range(500):
        base = random.randrange(20000, 30000 - count)
        block = list(range(base, base + count))
        if not taken.intersection(block) and all(port_free(p) for p in block):
            taken.update(block)
            return block
    raise RuntimeError(f"no {count} consecutive free ports found")


@pytest.fixture
def var_dir() -> Iterator[Path]:
    """A short, world-traversable folder: Postgres runs as another user when we are root,
    and Ray's unix sockets need a short path."""
    path = Path(tempfile.mkdtemp(prefix="rls-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    kill_processes_mentioning(str(path))
    shutil.rmtree(path, ignore_errors=True)


def studio_env(var: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RLSTUDIO_")}
    for name in ("DATABASE_URL", "REDIS_URL", "RAY_ADDRESS", "RAY_AUTH_MODE"):
        env.pop(name, None)
    env["RLSTUDIO_VAR_DIR"] = str(var)
    return env


def processes_mentioning(text: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            cmdline = " ".join(proc.info["cmdline"] or [])
        except psutil.Error:
            continue
        if text in cmdline and proc.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(proc)
    return found


def kill_processes_mentioning(text: str) -> None:
    for proc in processes_mentioning(text):
        with contextlib.suppress(psutil.Error):
            proc.kill()

"""bench/free_quarantine.c, the heap hunt's write-after-free check (#46): a clean result
from it means something only if it does catch a write into a freed block."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[2] / "bench" / "free_quarantine.c"

# A 40-byte block freed, then (or not) one byte of it written, through libc directly.
PROGRAM = """
import ctypes, sys
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
block = libc.malloc(40)
libc.free(block)
if sys.argv[1] == "write":
    ctypes.memset(block + 8, 0x42, 1)
"""


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc to build bench/free_quarantine.c")
    built = tmp_path_factory.mktemp("quarantine") / "free_quarantine.so"
    subprocess.run(
        ["gcc", "-O2", "-Wall", "-Werror", "-shared", "-fPIC", "-o", built, SOURCE, "-lpthread"],
        check=True,
    )
    return built


def run_quarantined(library: Path, logs: Path, action: str) -> str:
    """The reports of one process that frees a block and then does `action` to it."""
    logs.mkdir()
    env = {**os.environ, "LD_PRELOAD": str(library), "FREE_QUARANTINE_LOG": str(logs)}
    subprocess.run([sys.executable, "-c", PROGRAM, action], env=env, check=True, timeout=60)
    return "".join(log.read_text() for log in logs.glob("*.log"))


def test_a_write_into_a_freed_block_is_reported_with_the_stack_that_freed_it(
    library: Path, tmp_path: Path
) -> None:
    report = run_quarantined(library, tmp_path / "logs", "write")
    assert "40-byte block" in report
    assert "written after free: bytes 8..8 changed: 42" in report
    assert "freed by:" in report
    assert ", 1 written after free" in report  # the process's summary at exit


def test_blocks_nobody_touched_after_free_are_not_reported(library: Path, tmp_path: Path) -> None:
    report = run_quarantined(library, tmp_path / "logs", "leave")
    assert "written after free: bytes" not in report
    assert ", 0 written after free" in report

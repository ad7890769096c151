"""bench/free_quarantine.c, the heap hunt's write-after-free check (#46): a clean result
from it means something only if it does catch a write into a freed block."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[2] / "bench" / "free_quarantine.c"

# A block of argv[1] bytes freed, then (or not) its byte argv[2] written, through libc.
PROGRAM = """
import ctypes, sys
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
block = libc.malloc(int(sys.argv[1]))
libc.free(block)
if sys.argv[2] != "none":
    ctypes.memset(block + int(sys.argv[2]), 0x42, 1)
"""
SMALL = 40  # a fastbin-sized block, the kind the abort's message is about
LARGE = 3 << 20  # a tensor-sized block, held by the byte-bounded ring


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


def run_quarantined(library: Path, logs: Path, size: int, written_byte: int | None) -> str:
    """The reports of one process that frees a block and then writes one byte of it."""
    logs.mkdir()
    env = {**os.environ, "LD_PRELOAD": str(library), "FREE_QUARANTINE_LOG": str(logs)}
    written = "none" if written_byte is None else str(written_byte)  # byte 0 is a byte
    argv = [sys.executable, "-c", PROGRAM, str(size), written]
    subprocess.run(argv, env=env, check=True, timeout=60)
    return "".join(log.read_text() for log in logs.glob("*.log"))


@pytest.mark.parametrize(("size", "written_byte"), [(SMALL, 8), (LARGE, LARGE - 5000)])
def test_a_write_into_a_freed_block_is_reported_with_the_stack_that_freed_it(
    library: Path, tmp_path: Path, size: int, written_byte: int
) -> None:
    report = run_quarantined(library, tmp_path / "logs", size, written_byte)
    held = re.search(r"(\d+)-byte block", report)
    assert held and size <= int(held[1]) <= size + 4096  # usable size: up to a page more
    assert f"written after free: bytes {written_byte}..{written_byte} changed: 42" in report
    assert "freed by:" in report
    assert ", 1 written after free" in report  # the process's summary at exit


@pytest.mark.parametrize("size", [SMALL, LARGE])
def test_blocks_nobody_touched_after_free_are_not_reported(
    library: Path, tmp_path: Path, size: int
) -> None:
    report = run_quarantined(library, tmp_path / "logs", size, None)
    assert "written after free: bytes" not in report
    assert ", 0 written after free" in report

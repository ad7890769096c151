"""Cores of crashed processes read into the test report (tests/crash_cores.py, #46)."""

from __future__ import annotations

import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import crash_cores


def test_only_an_elf_core_counts_as_one(tmp_path: Path) -> None:
    (tmp_path / "core").write_text("not a core\n")
    (tmp_path / "core.py").write_bytes(b"\x7fELF" + bytes(14))  # ELF, but no core
    assert not crash_cores.is_core(tmp_path / "core")
    assert not crash_cores.is_core(tmp_path / "core.py")


def test_dumps_on_raises_the_limit_for_children_and_puts_it_back() -> None:
    before = resource.getrlimit(resource.RLIMIT_CORE)
    probe = "import resource; print(*resource.getrlimit(resource.RLIMIT_CORE))"
    with crash_cores.dumps_on():
        shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    soft, hard = (int(v) for v in shown.stdout.split())
    assert soft == hard == before[1]
    assert resource.getrlimit(resource.RLIMIT_CORE) == before


def test_a_heap_abort_leaves_its_stacks_and_the_corrupt_link_and_the_core_is_moved_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if crash_cores.core_place(tmp_path) is None:
        pytest.skip(f"core_pattern does not write files here: {crash_cores.core_pattern()!r}")
    if shutil.which("gdb") is None:
        pytest.skip("gdb is not installed")
    kept = tmp_path / "kept"
    monkeypatch.setattr(crash_cores, "KEPT", kept)
    started = time.time() - 1  # file times are coarser than time.time()
    with crash_cores.dumps_on():
        crashed = subprocess.run(
            [sys.executable, "-c", crash_cores.WRITE_AFTER_FREE],
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
    assert crashed.returncode == -6, crashed.stderr  # SIGABRT
    assert crash_cores.FASTBIN_ABORT in crashed.stderr

    read = crash_cores.take_cores(started, cwd=tmp_path)

    assert len(read) == 1
    name, stacks = read[0]
    assert "malloc_consolidate" in stacks and "Thread 1" in stacks, stacks[-3000:]
    if Path("/usr/lib/debug/.build-id").is_dir():  # glibc's symbols (libc6-dbg): its locals
        detail = stacks[stacks.index("# the corrupt fastbin") :]
        assert "main_arena" in detail and "= 0x4141414141414141" in detail, detail
    assert not crash_cores.cores_since(started, cwd=tmp_path)  # taken: never read twice
    assert [p.name for p in kept.iterdir()] == [name]

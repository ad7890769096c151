"""Core dumps of processes that crash under the test suite, read with gdb into the report.

Twice in CI a gloo worker died of a heap corruption (`malloc_consolidate(): unaligned
fastbin chunk detected`, #46, docs/distributed.md). Each left one line from glibc and the
aborting thread's stack, and neither 100-odd stressed loops nor valgrind brought it back,
so its cause is not known. The next occurrence must leave more than that:

- The Ray heads the tests start ask the trainer's workers to dump core
  (`WORKER_CORE_DUMPS` in the head's environment, which every worker and job inherits;
  trainer.distributed.crash_evidence). Ray's own processes and the rest of the suite do
  not: Ray's dashboard agent can abort while a head is torn down, which says nothing
  about our code (seen once in CI: a 9 MiB core gdb could not unwind, cut short at the
  teardown).
- A failing test whose run left a core gets gdb's reading of it in its report: the
  crashing thread's frames with their locals (glibc's are named: Debian's libc6-dbg is
  on these machines) and every thread's stack, so the arena, the chunk and what the other
  threads (gloo's among them) were doing at the abort are on record in CI's output.
- A core from a test that passed anyway (a retried worker) is read into the end-of-run
  summary.

Where the kernel writes a core is the machine's `core_pattern`: a plain name (Debian's
default `core`) lands in the crashing process's working directory, which for Ray's
workers and our heads is the test process's own (the repository root); a path lands
there; a pipe (systemd-coredump, apport) hands it to that program, and then nothing is
collected here. A worker running as another account (the trainer account's heads) can
write its core only where that account may write, so into the repository root it
writes none (not checked here).
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from trainer.distributed.crash_evidence import CORE_DUMPS_ENV

REPO_ROOT = Path(__file__).resolve().parent.parent
WORKER_CORE_DUMPS = {CORE_DUMPS_ENV: "1"}
KEPT = REPO_ROOT / "var" / "crash-cores"  # the newest core read, for a person with gdb
GDB_TIMEOUT_S = 240  # a torch worker's core read in 2-12 s here; a big model's takes longer
MAX_REPORT_CHARS = 60_000  # a Ray worker has ~30 threads; its stacks fit
_ET_CORE = 4  # ELF e_type of a core file


@contextlib.contextmanager
def dumps_on() -> Iterator[None]:
    """Core dumps on for the processes started inside (the soft RLIMIT_CORE raised to the
    hard limit in this process; children inherit it when they fork), then as before here.
    For a test's own crashing child; the heads use `WORKER_CORE_DUMPS`."""
    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_CORE, (soft, hard))


def core_pattern() -> str:
    try:
        return Path("/proc/sys/kernel/core_pattern").read_text().strip()
    except OSError:
        return ""


def core_place(cwd: Path) -> tuple[Path, str] | None:
    """The folder a crashing process with working directory `cwd` writes its core to, and
    the start of the file's name; None where the kernel pipes cores to a program."""
    pattern = core_pattern()
    if not pattern or pattern.startswith("|"):
        return None
    folder, name = os.path.split(pattern)
    if "%" in folder:  # a folder per process or per program: not looked through
        return None
    prefix = name.split("%", 1)[0]
    return (Path(folder) if os.path.isabs(folder) else cwd / folder), prefix


def is_core(path: Path) -> bool:
    """An ELF core file (not any file whose name starts with `core`)."""
    try:
        with path.open("rb") as f:
            header = f.read(18)
    except OSError:
        return False
    return len(header) == 18 and header[:4] == b"\x7fELF" and header[16] == _ET_CORE


def cores_since(since: float, cwd: Path | None = None) -> list[Path]:
    """Cores written at or after `since` (epoch seconds), oldest first."""
    place = core_place(cwd or Path.cwd())
    if place is None:
        return []
    folder, prefix = place
    try:
        candidates = [p for p in folder.iterdir() if p.name.startswith(prefix)]
    except OSError:
        return []
    found = []
    for path in candidates:
        try:
            written = path.stat().st_mtime
        except OSError:
            continue
        if written >= since and path.is_file() and is_core(path):
            found.append((written, path))
    return [path for _, path in sorted(found)]


def program_of(core: Path, gdb: str) -> str:
    """The executable that dumped `core`: the first word of its command line where that is
    a file (raylet, gcs_server), else this interpreter (Ray's workers retitle themselves
    `ray::<Actor>.<method>`, and every Python process of the suite runs this one)."""
    try:
        shown = subprocess.run(
            [gdb, "-batch", "-nx", "-c", str(core)],
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
    except subprocess.TimeoutExpired:
        shown = ""
    match = re.search(r"Core was generated by `([^\s']+)", shown)
    if match and os.path.isfile(match.group(1)) and os.access(match.group(1), os.X_OK):
        return match.group(1)
    return sys.executable


STACKS = ["bt full 20", "info threads", "thread apply all bt 30"]
# glibc's abort when a freed small block's link was overwritten (#46): which arena and
# fastbin (chunks of 16 * (index + 2) bytes), and the link it read. Safe-linking XORs a
# link with its own address >> 12, so the high bytes of `p` are the bytes written there.
FASTBIN_ABORT = "malloc_consolidate(): unaligned fastbin chunk detected"
FASTBIN_DETAIL = [
    "echo \\n# the corrupt fastbin: arena, index, and the link read from it (p)\\n",
    "frame function malloc_consolidate",
    "print av",
    "print fb - av->fastbinsY",
    "print/x p",
]

# A program that aborts as the CI workers of #46 did: a freed small block's link
# overwritten, found when a large request makes malloc consolidate its fastbins.
#
# The block written must be in a fastbin, not in the thread's tcache: a tcache link read
# back unaligned aborts later, at the next malloc of that size, wherever the thread is
# then ("malloc(): unaligned tcache chunk detected", once in a Ray worker's main loop on a
# loaded CI machine). Which bin a free feeds is not certain from Python: anything that
# takes a block of this size from the tcache between the frees (a finalizer the cyclic
# collector runs, for one) opens a slot there for a later free. So the collector is off,
# and the block is picked by what glibc wrote: a free into the tcache stores the tcache's
# key in the block's second word, a free into a fastbin leaves that word as it was (zero
# here).
WRITE_AFTER_FREE = """
import ctypes, gc
gc.disable()
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
blocks = [libc.malloc(40) for _ in range(16)]
for block in blocks:
    ctypes.c_uint64.from_address(block + 8).value = 0
for block in blocks:
    libc.free(block)  # 7 fill the tcache of this size (at most), the rest go to a fastbin
in_fastbin = [b for b in blocks if ctypes.c_uint64.from_address(b + 8).value == 0]
assert in_fastbin, "every freed block went to the tcache"
# Written after free: the fastbin's link, chosen so that glibc reads back 0x4141...41 (it
# XORs a link with its own address >> 12), which is never aligned. Plain 0x41 bytes would
# read back aligned one time in 16 and fail another check.
target = in_fastbin[-1]
ctypes.c_uint64.from_address(target).value = (target >> 12) ^ 0x4141414141414141
libc.malloc(4000)  # a large request consolidates the fastbins
"""


def native_stacks(core: Path) -> str:
    """gdb's reading of `core`: what dumped it, the crashing thread's frames with their
    locals, and every thread's stack (plus the fastbin's detail after a fastbin abort)."""
    gdb = shutil.which("gdb")
    if gdb is None:
        return f"gdb is not installed here: the core is at {core}"
    program = program_of(core, gdb)
    started = time.monotonic()
    text = run_gdb(gdb, program, core, STACKS)
    detail = run_gdb(gdb, program, core, FASTBIN_DETAIL) if FASTBIN_ABORT in text else ""
    if len(text) > MAX_REPORT_CHARS:  # cut the stacks, never the fastbin's detail
        text = text[:MAX_REPORT_CHARS] + f"\n... ({len(text) - MAX_REPORT_CHARS} chars more)"
    text += detail
    took = time.monotonic() - started
    size_mib = core.stat().st_size >> 20
    return f"{size_mib} MiB, program {program}, read in {took:.0f} s\n{text}"


def run_gdb(gdb: str, program: str, core: Path, commands: list[str]) -> str:
    """gdb's output for `commands` on `core` (it goes on past a command that fails)."""
    argv = [gdb, "-batch", "-nx", "-ex", "set pagination off"]
    argv += [arg for command in commands for arg in ("-ex", command)]
    try:
        done = subprocess.run(
            [*argv, program, str(core)],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=GDB_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired as stopped:
        partial = stopped.stdout or b""  # bytes here, whatever `text` said
        shown = partial.decode(errors="replace") if isinstance(partial, bytes) else partial
        return f"(gdb stopped after {GDB_TIMEOUT_S} s)\n{shown}"
    # One "[New LWP n]" line a thread says nothing the thread list does not.
    return re.sub(r"(?m)^\[New LWP \d+\]\n", "", done.stdout + done.stderr)


def take_cores(since: float, cwd: Path | None = None) -> list[tuple[str, str]]:
    """Read every core written since `since` and move it out of the way: (name, gdb's
    reading) each. The newest read is kept as var/crash-cores/<name> (one at a time: a
    torch worker's core is 1-2 GB). A core that another pytest worker is reading is left
    to it: the reader claims it first by renaming it to a hidden name."""
    read: list[tuple[str, str]] = []
    for core in cores_since(since, cwd):
        claimed = core.with_name(f".{core.name}.reading.{os.getpid()}")
        try:
            core.rename(claimed)  # atomic, and the name no longer looks like a core
        except OSError:
            continue
        stacks = native_stacks(claimed)
        KEPT.mkdir(parents=True, exist_ok=True)
        for older in KEPT.iterdir():
            older.unlink(missing_ok=True)
        kept = KEPT / core.name
        try:
            claimed.replace(kept)
        except OSError:  # another file system (a core_pattern with a path): left there
            kept = claimed
        read.append((core.name, f"core kept at {kept}, {stacks}"))
    return read

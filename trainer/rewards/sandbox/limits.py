"""`SandboxLimits`: what one sandboxed call may use, and the time limits derived from it."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from trainer.rewards.contract import BATCH_CHUNK_SIZE


@dataclass(frozen=True)
class SandboxLimits:
    """Per-call limits of the sandbox. Every field is enforced in each child process."""

    timeout_s: float = 5.0  # wall clock per call (per row for a batch function)
    memory_mb: int = 512  # RSS of the call's process tree; RLIMIT_AS is 1.25x on top
    output_bytes: int = 64 * 1024  # stdout+stderr kept per call (the rest is dropped)
    file_size_mb: int = 16  # RLIMIT_FSIZE: largest file the call may write
    scratch_mb: int = 64  # size of the tmpfs holding scratch directories
    max_processes: int = 32  # RLIMIT_NPROC of the worker's own uid (threads count too)
    max_open_files: int = 64  # RLIMIT_NOFILE
    cpu_s: int = 0  # RLIMIT_CPU; 0 means ceil(timeout_s) + 1
    load_timeout_s: float = 30.0  # loading the code and checking it at pool start
    chunk_size: int = BATCH_CHUNK_SIZE  # requests per template process (one batch call)
    # A batch function's call over n rows may take n * timeout_s, but never more than
    # this: a 64-row chunk at the default 5 s would otherwise hold a worker for 320 s.
    max_batch_timeout_s: float = 60.0
    # None: each worker runs its calls as a uid of its own, UID_BASE + the zygote's pid
    # (unique while it lives), so the uid-wide RLIMIT_NPROC of one pool never starves
    # another pool's (or the host's) forks. A fixed uid is for tests only.
    uid: int | None = None
    gid: int | None = None

    def __post_init__(self) -> None:
        for name in (
            "timeout_s",
            "memory_mb",
            "output_bytes",
            "file_size_mb",
            "scratch_mb",
            "max_processes",
            "max_open_files",
            "load_timeout_s",
            "chunk_size",
            "max_batch_timeout_s",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(
                    f"SandboxLimits.{name} must be positive, got {getattr(self, name)!r}"
                )

    def batch_timeout_s(self, rows: int) -> float:
        """Wall-clock limit of one batch-function call over ``rows`` rows: ``timeout_s``
        per row, capped at ``max_batch_timeout_s``, never under ``timeout_s``."""
        return max(self.timeout_s, min(self.timeout_s * rows, self.max_batch_timeout_s))

    def worst_case_s(self, rows: int, batch: bool) -> float:
        """The longest scoring ``rows`` rows in one chunk can take (calls' limits only).
        For a batch function: the whole call, then every row alone (the fallback)."""
        alone = self.timeout_s * rows
        return alone + (self.batch_timeout_s(rows) if batch and rows > 1 else 0.0)

    def to_wire(self) -> dict[str, Any]:
        out = asdict(self)
        out["cpu_s"] = self.cpu_s or math.ceil(self.timeout_s) + 1
        return out

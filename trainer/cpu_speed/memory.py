"""Keep the memory a training step frees for the next step, instead of giving it back.

glibc's malloc returns large freed blocks to the kernel: a block above the mmap
threshold (it adapts, up to 32 MiB) is unmapped when freed, and free space past the trim
threshold at the top of the heap is released. A training step frees and allocates the
same activation shapes every step, so every step faulted its memory in again, a page at
a time. On a 2-core KVM guest a long128 bench step (bench/trainer_vs_trl.py) took 85k to
245k minor page faults at about 4 us each: 0.3-1 s of an 8 s step. With no mmap'd blocks
and no trimming, the heap grows over the first few steps until the step's blocks fit,
then serves them from pages already faulted in (tests/trainer/test_cpu_memory.py).

The cost: the process's resident memory stays at its peak (later allocations reuse it).
That suits a trainer process, which reaches the same peak every step; it is applied in
the trainer's processes only (`trainer.training.state.build_state`, the distributed workers).
"""

from __future__ import annotations

import ctypes
import functools
import logging
import sys

log = logging.getLogger(__name__)

# mallopt parameters, from glibc's <malloc.h>
M_TRIM_THRESHOLD = -1
M_MMAP_MAX = -4


@functools.cache
def keep_freed_memory() -> bool:
    """Tell glibc's malloc to serve every block from its heaps and never trim them; once
    per process. False (nothing changed) off Linux or with another C library."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None)  # the C library this process already runs on
    if not hasattr(libc, "gnu_get_libc_version"):  # musl and others: mallopt differs
        return False
    # -1 disables trimming (glibc's mallopt(3)); 0 mmap'd blocks puts big ones on the heap.
    applied = bool(libc.mallopt(M_TRIM_THRESHOLD, -1)) and bool(libc.mallopt(M_MMAP_MAX, 0))
    log.info("glibc malloc keeps freed memory for reuse: %s", applied)
    return applied

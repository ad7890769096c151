"""trainer.cpu_memory: memory a step frees serves the next steps without page faults."""

from __future__ import annotations

import resource

import torch

from trainer.cpu_memory import keep_freed_memory


def minor_faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def step_faults() -> int:
    """Minor page faults of one step-like burst: 64 MiB blocks written, then freed (glibc
    would mmap each and unmap it on free: 16,384 faults a block, 98k a burst)."""
    before = minor_faults()
    blocks = [torch.ones(16 * 2**20) for _ in range(3)]
    doubled = [block * 2 for block in blocks]
    assert float(sum(d.sum() for d in doubled)) == 6 * 16 * 2**20
    return minor_faults() - before


def test_steps_reuse_freed_memory_without_page_faults() -> None:
    assert keep_freed_memory()  # Linux with glibc, as every machine that runs the tests
    faults = [step_faults() for _ in range(4)]
    # The heap grows to the burst's peak over the first steps, then serves it as it is.
    assert faults[-1] < 1_000, faults

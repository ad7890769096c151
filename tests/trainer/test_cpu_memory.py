"""trainer.cpu_speed.memory: memory a step frees serves the next steps instead of being faulted
in again."""

from __future__ import annotations

import json
import subprocess
import sys

# Each run is a fresh interpreter: malloc's settings and heap are process-wide, and a test
# worker's heap is shaped by whatever tests ran in it before.
BURSTS = """
import json, resource, sys, torch
from trainer.cpu_speed.memory import keep_freed_memory

def minor_faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

def step_faults():
    # Six 64 MiB blocks written, then freed (glibc mmaps each and unmaps it on free:
    # 16,384 faults a block, 98k a burst).
    before = minor_faults()
    blocks = [torch.ones(16 * 2**20) for _ in range(3)]
    doubled = [block * 2 for block in blocks]
    assert float(sum(d.sum() for d in doubled)) == 6 * 16 * 2**20
    return minor_faults() - before

applied = keep_freed_memory() if sys.argv[1] == "keep" else False
print(json.dumps({"applied": applied, "faults": [step_faults() for _ in range(8)]}))
"""


def burst_faults(mode: str) -> tuple[bool, list[int]]:
    child = subprocess.run(
        [sys.executable, "-c", BURSTS, mode],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result = json.loads(child.stdout.strip().splitlines()[-1])
    return result["applied"], result["faults"]


def test_steps_reuse_freed_memory_instead_of_faulting_it_in_again() -> None:
    applied, faults = burst_faults("keep")
    assert applied  # Linux with glibc, as every machine that runs the tests
    # The heap grows to fit a burst over the first few (the layout of the freed blocks
    # decides how many; bursts 2-8 together faulted 0.5-1.3 bursts' worth in 12 runs),
    # then serves it as it is.
    assert sum(faults[1:]) < 2 * faults[0], faults


def test_without_it_every_step_faults_its_memory_in_again() -> None:
    applied, faults = burst_faults("default")
    assert not applied
    assert sum(faults[1:]) > 5 * faults[0], faults  # 7 bursts' worth: each one anew

"""How the size of the process that scores changes `verl_code`'s time on one row.

Each row of `verl_code` forks the scoring process once per run (the whole run, then up to
ten lone test cases) and waits for each killed run's teardown; both cost in proportion to
that process's memory. The sandbox scores in a small process; one that has loaded a model
holds far more. This keeps `ballast_gb` gigabytes resident, then times a fork alone and the
scoring of a program that hangs on every test case (the bound `worst_case_s` leaves
forking out).

    .venv/bin/python bench/verl_code_parent_size.py 0
    .venv/bin/python bench/verl_code_parent_size.py 2
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import time

from trainer.rewards.templates import verl_code as template

HANGS = "```python\nwhile True:\n    pass\n```"
TEN_CASES = json.dumps({"inputs": ["1 2\n"] * 10, "outputs": ["3\n"] * 10})
LIMITS = {"timeout_s": 0.3, "max_concurrent": 4}


def fork_ms(times: int = 10) -> float:
    taken = []
    for _ in range(times):
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        taken.append(time.monotonic() - started)
        os.waitpid(pid, 0)
    return statistics.median(taken) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ballast_gb", type=float)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    ballast = bytearray(int(args.ballast_gb * 2**30))
    for offset in range(0, len(ballast), 4096):  # touch every page: resident, not reserved
        ballast[offset] = 1
    scoring = []
    for _ in range(args.rounds):
        started = time.monotonic()
        assert template.compute_score("taco", HANGS, TEN_CASES, None, **LIMITS) == 0.0
        scoring.append(round(time.monotonic() - started, 2))
    resident_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(
        f"resident {resident_gb:.2f} GB: a fork {fork_ms():.1f} ms (median of 10), "
        f"scoring a hanging program {scoring} s (bound {template.worst_case_s(LIMITS)} s)"
    )


if __name__ == "__main__":
    main()

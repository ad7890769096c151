"""`tools-program`: a toy program-writing task for the ``python`` tool environment.

Each prompt asks for a number that is easy to compute with a short program and
tedious to compute in one's head (``"Use the python tool to compute the sum of the
squares of 1 to 17, then answer with the number."``); the ground truth is that number
as a string, so the ``arith`` reward (first integer of the final answer) scores it.
Seeded and deterministic, written as verl parquet like the other toy datasets.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trainer.demo.toy_data import verl_row, write_rows

PROMPT = "Use the python tool to compute {what}, then answer with the number."


def _primes_below(n: int) -> int:
    return sum(1 for k in range(2, n) if all(k % d for d in range(2, math.isqrt(k) + 1)))


# (description with {n}, value of n, range of n)
PROBLEMS: tuple[tuple[str, Callable[[int], int], tuple[int, int]], ...] = (
    ("the sum of the integers from 1 to {n}", lambda n: n * (n + 1) // 2, (10, 999)),
    ("the sum of the squares of 1 to {n}", lambda n: sum(k * k for k in range(1, n + 1)), (5, 99)),
    ("{n} factorial", math.factorial, (5, 15)),
    ("the number of primes below {n}", _primes_below, (10, 999)),
)


def program_rows(
    n_train: int, n_test: int, seed: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rng = random.Random(seed)

    def rows(count: int, split: str) -> list[dict[str, Any]]:
        out = []
        for i in range(count):
            what, value, (low, high) = rng.choice(PROBLEMS)
            n = rng.randint(low, high)
            out.append(
                verl_row("program", PROMPT.format(what=what.format(n=n)), str(value(n)), split, i)
            )
        return out

    return rows(n_train, "train"), rows(n_test, "test")


def write_tools_program(
    out_dir: str | Path, n_train: int = 1000, n_test: int = 100, seed: int = 0
) -> tuple[Path, Path]:
    """`{out_dir}/tools-program/{train,test}.parquet`."""
    train, test = program_rows(n_train, n_test, seed)
    folder = Path(out_dir) / "tools-program"
    return write_rows(train, folder / "train.parquet"), write_rows(test, folder / "test.parquet")

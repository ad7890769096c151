"""Toy datasets of the demo, written as verl parquet.

- `arith`: small integer arithmetic. The user message is just the expression,
  e.g. ``"7+5="``, and the expected response is just the number, ``"12"``,
  so a tiny model can learn it (reward: first integer of the response equals
  the ground truth string).
- `countdown`: TinyZero's task: reach a target with some numbers and + - * /,
  ground truth ``{"target": int, "numbers": [int, ...]}`` as verl's reward expects.

Every generator is seeded and deterministic (its own `random.Random`).
arith's problem space is small (155 facts by default), so its train and test
splits are drawn from the same space: validation measures how many of the
facts the policy answers, not generalisation to unseen ones (a tiny model
trained for minutes does not generalise addition). countdown draws problems
at random from a large space.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq

ToyName = Literal["arith", "countdown"]
TOY_NAMES: tuple[ToyName, ...] = ("arith", "countdown")


@dataclass(frozen=True)
class ArithSpec:
    """The arith problem space: ``a op b`` with operands in [0, max_operand]."""

    max_operand: int = 9
    ops: tuple[str, ...] = ("+", "-")
    # Subtraction is written larger-first so every answer is a non-negative integer.
    nonnegative: bool = True


ARITH_DEFAULT = ArithSpec()


def arith_problems(spec: ArithSpec = ARITH_DEFAULT) -> list[tuple[int, str, int]]:
    """The whole problem space, in a fixed order: (a, op, b) triples."""
    problems: list[tuple[int, str, int]] = []
    for op in spec.ops:
        for a in range(spec.max_operand + 1):
            for b in range(spec.max_operand + 1):
                if op == "-" and spec.nonnegative and a < b:
                    continue
                problems.append((a, op, b))
    return problems


def arith_answer(a: int, op: str, b: int) -> int:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    raise ValueError(f"unknown arith op {op!r}; allowed: '+', '-', '*'")


def arith_prompt(a: int, op: str, b: int) -> str:
    return f"{a}{op}{b}="


def _draw(pool: list[Any], n: int, rng: random.Random) -> list[Any]:
    """n items of `pool`: a shuffled pass over it, repeated as often as needed."""
    if n > 0 and not pool:
        raise ValueError("cannot draw rows from an empty problem pool")
    out: list[Any] = []
    while len(out) < n:
        chunk = list(pool)
        rng.shuffle(chunk)
        out.extend(chunk[: n - len(out)])
    return out


def verl_row(
    data_source: str, content: str, ground_truth: Any, split: str, index: int
) -> dict[str, Any]:
    return {
        "data_source": data_source,
        "prompt": [{"role": "user", "content": content}],
        "ability": "math",
        "reward_model": {"style": "rule", "ground_truth": ground_truth},
        "extra_info": {"split": split, "index": index},
    }


def arith_rows(
    n_train: int, n_test: int, seed: int, spec: ArithSpec = ARITH_DEFAULT
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """verl rows of the arith task; ground truth is the answer as a string.

    test: up to `n_test` distinct problems; train: shuffled passes over the space.
    """
    space = arith_problems(spec)
    rng = random.Random(seed)
    test = _draw(space, min(n_test, len(space)), rng)
    train = _draw(space, n_train, rng)

    def rows(problems: list[tuple[int, str, int]], split: str) -> list[dict[str, Any]]:
        return [
            verl_row("arith", arith_prompt(a, op, b), str(arith_answer(a, op, b)), split, i)
            for i, (a, op, b) in enumerate(problems)
        ]

    return rows(train, "train"), rows(test, "test")


COUNTDOWN_TEMPLATE = (
    "Using the numbers {numbers}, create an equation that equals {target}. "
    "You can use basic arithmetic operations (+, -, *, /) and each number can only be "
    "used once. Return the final answer in <answer> </answer> tags, "
    "for example <answer> (1 + 2) / 3 </answer>."
)


def _countdown_problem(rng: random.Random) -> tuple[list[int], int]:
    """Numbers and a reachable target in [1, 100] (built by combining them left to right)."""
    while True:
        numbers = [rng.randint(1, 99) for _ in range(rng.choice((3, 4)))]
        order = list(numbers)
        rng.shuffle(order)
        value = order[0]
        for x in order[1:]:
            op = rng.choice("+-*/")
            if op == "+":
                value += x
            elif op == "-":
                value -= x
            elif op == "*":
                value *= x
            elif value % x == 0:
                value //= x
            else:
                value += x
        if 1 <= value <= 100:
            return numbers, value


def countdown_rows(
    n_train: int, n_test: int, seed: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rng = random.Random(seed)

    def rows(n: int, split: str) -> list[dict[str, Any]]:
        out = []
        for i in range(n):
            numbers, target = _countdown_problem(rng)
            content = COUNTDOWN_TEMPLATE.format(numbers=numbers, target=target)
            out.append(
                verl_row("countdown", content, {"target": target, "numbers": numbers}, split, i)
            )
        return out

    return rows(n_train, "train"), rows(n_test, "test")


_GENERATORS: dict[
    ToyName, Callable[[int, int, int], tuple[list[dict[str, Any]], list[dict[str, Any]]]]
] = {
    "arith": lambda n_train, n_test, seed: arith_rows(n_train, n_test, seed),
    "countdown": countdown_rows,
}


def toy_rows(
    name: ToyName, n_train: int, n_test: int, seed: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    if name not in _GENERATORS:
        raise ValueError(f"unknown toy dataset {name!r}; choose one of {list(TOY_NAMES)}")
    return _GENERATORS[name](n_train, n_test, seed)


def write_rows(rows: list[dict[str, Any]], path: str | Path) -> Path:
    """Write verl rows to parquet (the schema is inferred, so ground truth keeps its type)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def write_toy_dataset(
    name: ToyName, out_dir: str | Path, n_train: int = 2000, n_test: int = 200, seed: int = 0
) -> tuple[Path, Path]:
    """Write `{out_dir}/{name}/train.parquet` and `test.parquet`; returns both paths."""
    train, test = toy_rows(name, n_train, n_test, seed)
    folder = Path(out_dir) / name
    return write_rows(train, folder / "train.parquet"), write_rows(test, folder / "test.parquet")

"""PyTorch's float32 CPU products against oneDNN's (trainer.cpu_speed.onednn_linear), side by side.

For the long bench model's linear shapes (hidden 512, MLP 1,376, vocabulary 376), at 64
rows (a decoding step of 64 sequences) and 4,096 rows (an update's micro-batch): the
forward `x @ W.T`, the backward's input gradient `g @ W` and weight gradient `g.T @ x`.
Each product is timed both ways, alternating, best of `--rounds`, with warm operands:

    .venv/bin/python bench/cpu_linear.py [--threads 2] [--rounds 5]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import torch

from trainer.cpu_speed.onednn_linear import ONEDNN_AVAILABLE, linear_backward, onednn_linear

SHAPES = [(512, 512), (512, 1376), (1376, 512), (512, 376)]  # (in, out)
Product = Callable[[], object]


def best_seconds(fn: Product, repeats: int, rounds: int) -> float:
    for _ in range(3):
        fn()
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(repeats):
            fn()
        best = min(best, (time.perf_counter() - started) / repeats)
    return best


def products(
    x: torch.Tensor, w: torch.Tensor, g: torch.Tensor
) -> dict[str, tuple[Product, Product]]:
    """Each product as (PyTorch's, oneDNN's)."""

    def backward(needs: tuple[bool, bool, bool], onednn: bool) -> Product:
        return lambda: linear_backward(g, x, w, needs, False, onednn)

    input_grad, weight_grad = (True, False, False), (False, True, False)
    return {
        "forward": (lambda: x @ w.t(), lambda: onednn_linear(x, w)),
        "input grad": (backward(input_grad, False), backward(input_grad, True)),
        "weight grad": (backward(weight_grad, False), backward(weight_grad, True)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if not ONEDNN_AVAILABLE:
        raise SystemExit("this PyTorch build has no oneDNN")
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads} threads; GFLOP/s torch / oneDNN (ratio)")
    header = ("forward", "input grad", "weight grad")
    print(f"{'rows':>5} {'in':>5} {'out':>5}  " + "  ".join(f"{h:>22}" for h in header))
    for rows in (64, 4096):
        repeats = 200 if rows == 64 else 10
        for fan_in, fan_out in SHAPES:
            x, w = torch.randn(rows, fan_in), torch.randn(fan_out, fan_in)
            g = torch.randn(rows, fan_out)
            flops = 2 * rows * fan_in * fan_out
            cells = []
            for plain, fast in products(x, w, g).values():
                t_plain = best_seconds(plain, repeats, args.rounds)
                t_fast = best_seconds(fast, repeats, args.rounds)
                speeds = f"{flops / t_plain / 1e9:5.0f} / {flops / t_fast / 1e9:5.0f}"
                cells.append(f"{speeds} ({t_plain / t_fast:.2f}x)")
            print(f"{rows:>5} {fan_in:>5} {fan_out:>5}  " + "  ".join(f"{c:>22}" for c in cells))


if __name__ == "__main__":
    main()

"""Evaluation throughput against the trainer's own generation, side by side.

An evaluation (trainer.evaluation.evaluate) answers its prompts with the rollout engine
training uses (`HFEngine`), scores every response in the reward sandbox and reports each batch. This
bench times, on the same model, prompts and sampling, in alternating rounds:

- `evaluation`: `trainer.evaluation.evaluate.evaluate_model` (generate, score in the sandbox, report
  to a reporter that keeps nothing), the path a studio evaluation runs per model;
- `generation`: the trainer's rollout generation alone (`trainer.rollout.collect.generate`
  over the same batches), what a training step spends on the same responses.

Both times include loading the model once. The ratio is what scoring in the sandbox and
reporting add to generating.

It prints responses per second of each and their ratio per round (the median last):

    .venv/bin/python bench/eval_throughput.py --prompts 64 --k 4 --rounds 3

The demo model is built into a temporary folder when `--model-dir` is not given (warm
start off: throughput does not depend on what the weights learned).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import torch


class NullReporter:
    """Keeps nothing: the bench measures generation and scoring, not the studio."""

    def metrics(self, step: int, values: dict[str, float]) -> None: ...
    def samples(self, step: int, samples: list[Any]) -> None: ...
    def log(self, level: str, message: str) -> None: ...
    def checkpoint(self, step: int, path: str) -> None: ...
    def status(self, status: Any, detail: str = "") -> None: ...
    def progress(self, step: int, total: int) -> None: ...
    def close(self) -> None: ...


def build_assets(root: Path) -> tuple[Path, Path]:
    from trainer.demo.model import build_demo_assets

    build_demo_assets(root / "model", root / "data", seed=0, warmup_steps=0, evaluate=False)
    return root / "model", root / "data" / "arith" / "test.parquet"


def config(model: Path, data: Path, prompts: int, k: int) -> Any:
    from trainer.config import build_config

    return build_config(
        {
            "model": {"path": str(model)},
            "data": {"train_files": [str(data)], "val_files": [str(data)]},
            "reward": {"function": "arith", "executor": "sandbox"},
            "evaluation": {
                "models": [{"path": str(model), "label": "demo"}],
                "k": k,
                "greedy": False,
                "temperature": 1.0,
                "max_prompts": prompts,
            },
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", type=Path, help="a model folder (default: the demo's)")
    parser.add_argument("--data", type=Path, help="a parquet of prompts (default: demo arith)")
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--k", type=int, default=4, help="responses per prompt")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    from trainer.evaluation.evaluate import _prompts, evaluate_model, sampling_of
    from trainer.models.loading import load_policy, load_tokenizer, resolve_device
    from trainer.models.sources import resolve_model
    from trainer.rollout.collect import generate
    from trainer.rollout.hf import HFEngine
    from trainer.training.reward_sources import make_reward_scorer

    with tempfile.TemporaryDirectory(prefix="eval-bench-") as scratch:
        model_dir, data = args.model_dir, args.data
        if model_dir is None or data is None:
            built_model, built_data = build_assets(Path(scratch))
            model_dir, data = model_dir or built_model, data or built_data
        cfg = config(model_dir, data, args.prompts, args.k)
        device = resolve_device(cfg.resources.device)
        source = resolve_model(str(model_dir))
        items = _prompts(cfg, source.base, {})
        responses = len(items) * args.k
        scorer = make_reward_scorer(cfg.reward, device)
        print(
            f"{len(items)} prompts x k={args.k} = {responses} responses, "
            f"max_new_tokens {cfg.rollout.max_new_tokens}, batches of "
            f"{cfg.evaluation.batch_size}, {args.threads} threads, load {os.getloadavg()[0]:.2f}"
        )

        def evaluation() -> float:
            started = time.perf_counter()
            evaluate_model(cfg, 1, source, items, scorer, NullReporter(), device)
            return time.perf_counter() - started

        def generation() -> float:
            started = time.perf_counter()  # the model's load counts, as evaluate_model's does
            model = load_policy(source.base, source.dtype, device).eval()
            engine = HFEngine(
                model, load_tokenizer(source.base), device, cfg.rollout.micro_batch_size
            )
            sampling = sampling_of(cfg)
            with torch.no_grad():
                for start in range(0, len(items), cfg.evaluation.batch_size):
                    generate(engine, items[start : start + cfg.evaluation.batch_size], sampling)
            return time.perf_counter() - started

        ratios = []
        try:
            evaluation()  # warm: the sandbox's first fork, allocator, oneDNN kernels
            for round_ in range(1, args.rounds + 1):
                eval_s, gen_s = evaluation(), generation()
                ratio = (responses / eval_s) / (responses / gen_s)
                ratios.append(ratio)
                print(
                    f"round {round_}: evaluation {responses / eval_s:.1f} responses/s, "
                    f"generation alone {responses / gen_s:.1f} responses/s, ratio {ratio:.2f} "
                    f"(load {os.getloadavg()[0]:.2f})"
                )
        finally:
            scorer.close()
        print(f"median ratio (evaluation / generation alone): {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()

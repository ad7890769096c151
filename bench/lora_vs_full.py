"""LoRA vs full fine-tuning (CPU): peak RSS and step time of our GRPO trainer, side by side.

The large bench model (trainer.demo.model size `bench`: hidden 512 x 8 layers, random
init: memory and time do not depend on what it knows) is built once under
`var/bench/lora_vs_full/`. Runs alternate (full, LoRA, full, LoRA, ...), each in a fresh
subprocess of this script so its peak RSS (`ru_maxrss`) is its own. Per run: peak RSS,
the median `timing_s/step` and `timing_s/update_actor` over the steps after the first,
and the trainable parameter count. Both modes use the grpo-tiny-arith shape with
`actor.use_kl_loss=true`, so the full run loads a reference copy and the LoRA run uses
its base model instead.

    .venv/bin/python bench/lora_vs_full.py [--runs 2] [--steps 4] [--rank 8] [--prompts 16 --n 8]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "var" / "bench" / "lora_vs_full"


def build() -> None:
    from trainer.demo.model import build_demo_assets

    if not (WORK / "model" / "config.json").exists():
        build_demo_assets(
            WORK / "model", WORK / "data", seed=0, warmup_steps=0, size="bench", evaluate=False
        )


def worker_run(mode: str, steps: int, rank: int, prompts: int, n: int, out: Path) -> None:
    from trainer.config import load_config
    from trainer.reporting.base import Reporter
    from trainer.training.loop import Trainer

    class Metrics(Reporter):
        def __init__(self) -> None:
            self.steps: dict[int, dict[str, float]] = {}

        def metrics(self, step: int, values: dict[str, float]) -> None:
            self.steps.setdefault(step, {}).update(values)

        def samples(self, step: int, samples: list[Any]) -> None: ...
        def log(self, level: str, message: str) -> None: ...
        def checkpoint(self, step: int, path: str) -> None: ...
        def status(self, status: Any, detail: str = "") -> None: ...
        def progress(self, step: int, total: int) -> None: ...
        def close(self) -> None: ...

    overrides = [
        f"model.path={WORK / 'model'}",
        f"data.train_files=[{WORK / 'data' / 'arith' / 'train.parquet'}]",
        "data.val_files=[]",
        f"checkpoint.dir={WORK / 'runs' / f'{mode}-{os.getpid()}'}",
        "checkpoint.save_hf=false",
        "checkpoint.resume=never",
        "logging.console=false",
        f"trainer.total_steps={steps}",
        "actor.use_kl_loss=true",
        "resources.device=cpu",
        f"data.train_batch_size={prompts}",
        f"actor.ppo_mini_batch_size={prompts}",
        f"rollout.n={n}",
    ]
    if mode == "lora":
        overrides += [f"actor.lora.rank={rank}", "actor.optim.lr=2e-3"]
    cfg = load_config(overrides=overrides, preset="grpo-tiny-arith")
    reporter = Metrics()
    trainer = Trainer(cfg, reporter)
    trainable = sum(p.numel() for p in trainer.state.actor.parameters() if p.requires_grad)
    trainer.fit()
    later = [reporter.steps[s] for s in range(2, steps + 1)]
    result = {
        "mode": mode,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "step_s": statistics.median(m["timing_s/step"] for m in later),
        "update_actor_s": statistics.median(m["timing_s/update_actor"] for m in later),
        "trainable_params": trainable,
        "load": os.getloadavg()[0],
    }
    out.write_text(json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--rank", type=int, default=8)
    parser.add_argument("--prompts", type=int, default=16, help="prompts per step")
    parser.add_argument("--n", type=int, default=8, help="responses per prompt")
    parser.add_argument("--worker", choices=["full", "lora"])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.worker:
        worker_run(args.worker, args.steps, args.rank, args.prompts, args.n, args.out)
        return
    build()
    results: list[dict[str, Any]] = []
    for run in range(args.runs):
        for mode in ("full", "lora"):
            out = WORK / f"result-{mode}-{run}.json"
            cmd = [sys.executable, __file__, "--worker", mode, "--out", str(out)]
            cmd += ["--steps", str(args.steps), "--rank", str(args.rank)]
            cmd += ["--prompts", str(args.prompts), "--n", str(args.n)]
            subprocess.run(cmd, cwd=ROOT, check=True)
            results.append(json.loads(out.read_text()))
            print(json.dumps(results[-1]), flush=True)
    print(f"{'mode':6} {'peak RSS MB':>12} {'step s':>8} {'update s':>9} {'trainable':>11}")
    for mode in ("full", "lora"):
        rows = [r for r in results if r["mode"] == mode]
        print(
            f"{mode:6} {statistics.median(r['peak_rss_mb'] for r in rows):12.0f} "
            f"{statistics.median(r['step_s'] for r in rows):8.2f} "
            f"{statistics.median(r['update_actor_s'] for r in rows):9.2f} "
            f"{rows[0]['trainable_params']:11d}"
        )


if __name__ == "__main__":
    main()

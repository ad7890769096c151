"""A run's process start, cold vs through the warm trainer runtime (trainer.warm).

Runs the job's command, `python -m trainer.warm run CONFIG --print-config`, on the tiny
demo model (built offline into a temporary folder), alternating cold
(RLSTUDIO_WARM_RUNTIME=0: `python -m trainer run` in the job's own process, as before)
and warm (a child forked from a runtime started first with `python -m trainer.warm
start`), and times from the job's process start to

  - config:  the trainer's first output (the resolved config, printed in the CLI's `run`
             once the config is built: what `--from-studio` reaches at its bootstrap),
  - step 1:  its first metric line (torch, the model and one training step),
  - exit:    the process's end (2 steps).

Prints each round and the medians side by side with the cold/warm ratio.

    .venv/bin/python bench/warm_start.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from tests.warm_runtimes import remove_folder  # noqa: E402
from trainer.warm.rendezvous import DIR_ENV, ENABLE_ENV  # noqa: E402

MARKS = ("config", "step 1", "exit")


def tiny_config(root: Path) -> Path:
    from trainer.demo.model import build_demo_assets

    build_demo_assets(root / "model", root / "data", seed=0, warmup_steps=0, evaluate=False)
    tree = {
        "model": {"path": str(root / "model")},
        "data": {
            "train_files": [str(root / "data" / "arith" / "train.parquet")],
            "val_files": [],
            "train_batch_size": 2,
        },
        "rollout": {"n": 2, "max_new_tokens": 4},
        "actor": {"ppo_mini_batch_size": 2, "micro_batch_size": 4},
        "trainer": {"total_steps": 2, "val_before_train": False},
        # Every job trains from step 0: none resumes the checkpoint an earlier one left.
        "checkpoint": {"save_hf": False, "dir": str(root / "checkpoints"), "resume": "never"},
        "logging": {"console": True, "samples_per_step": 0},
    }
    path = root / "config.yaml"
    path.write_text(yaml.safe_dump(tree))
    return path


def time_job(config: Path, env: dict[str, str]) -> tuple[dict[str, float], str]:
    """Seconds from the job's start to each mark, and the line saying which path it took."""
    argv = [sys.executable, "-m", "trainer.warm", "run", str(config), "--print-config"]
    began = time.monotonic()
    job = subprocess.Popen(
        argv, env=env, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert job.stdout is not None
    marks: dict[str, float] = {}
    path = ""
    for line in job.stdout:
        if line.startswith(("warm runtime:", "cold start:")):
            path = line.strip()
        elif line.startswith("model:"):
            marks.setdefault("config", time.monotonic() - began)
        elif line.startswith("step 1"):
            marks.setdefault("step 1", time.monotonic() - began)
    code = job.wait()
    marks["exit"] = time.monotonic() - began
    if code != 0 or set(marks) != set(MARKS):
        raise SystemExit(f"the job failed (exit {code}, marks {marks}): {path}")
    return marks, path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="rw-bench-", dir="/tmp"))
    try:
        with tempfile.TemporaryDirectory(prefix="warm-bench-") as scratch:
            config = tiny_config(Path(scratch))
            env = {**os.environ, DIR_ENV: str(folder), "PYTHONPATH": str(REPO_ROOT)}
            env["PYTHONUNBUFFERED"] = "1"  # as the studio's jobs have it
            started = time.monotonic()
            subprocess.run(
                [sys.executable, "-m", "trainer.warm", "start"], env=env, cwd=REPO_ROOT, check=True
            )
            print(f"runtime ready in {time.monotonic() - started:.1f} s (its imports)")
            results: dict[str, list[dict[str, float]]] = {"cold": [], "warm": []}
            for round_no in range(1, args.rounds + 1):
                for kind in ("cold", "warm"):
                    job_env = {**env, ENABLE_ENV: "0"} if kind == "cold" else env
                    marks, path = time_job(config, job_env)
                    assert path.startswith("cold" if kind == "cold" else "warm"), path
                    results[kind].append(marks)
                    cells = "  ".join(f"{m} {marks[m]:5.2f} s" for m in MARKS)
                    print(f"round {round_no} {kind}: {cells}   ({path})")
    finally:
        remove_folder(folder)
    print(f"\nmedian of {args.rounds} (load {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs):")
    print(f"{'':8}{'cold':>9}{'warm':>9}{'cold/warm':>11}")
    for mark in MARKS:
        cold = statistics.median(r[mark] for r in results["cold"])
        warm = statistics.median(r[mark] for r in results["warm"])
        print(f"{mark:8}{cold:8.2f}s{warm:8.2f}s{cold / warm:10.1f}x")


if __name__ == "__main__":
    main()

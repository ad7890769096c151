"""Our trainer with the update's replay of rollout outputs on and off, alternating.

Each run is `trl_compare.ours.worker_ours` on a workload in a fresh subprocess, with
`speed.replay_rollout_outputs` set as asked (trainer/cpu_speed/linear_replay.py); prints per-run
seconds per step, generation and update seconds per step, and the step rewards:

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python bench/replay_on_off.py --workload long128 --steps 10 --rounds 2
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def run(workload: str, replay: bool, steps: int, threads: int) -> dict[str, Any]:
    import torch
    from trl_compare import ours
    from trl_compare.settings import WORK
    from trl_compare.workers import worker_build

    torch.set_num_threads(threads)
    ours_config = ours.ours_config

    def flipped(*args: Any, **kwargs: Any) -> Any:
        cfg = ours_config(*args, **kwargs)
        cfg.speed.replay_rollout_outputs = replay
        return cfg

    ours.ours_config = flipped  # worker_ours looks it up in its module
    worker_build(workload)
    run_dir = WORK / "replay_on_off" / ("on" if replay else "off")
    return ours.worker_ours(workload, run_dir, steps, seed=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="long128")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--worker", choices=["on", "off"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        result = run(args.workload, args.worker == "on", args.steps, args.threads)
        timing, steps = result["timing_s"], args.steps
        print(
            f"replay {args.worker}: {statistics.fmean(result['step_s']):.2f} s/step "
            f"(gen {timing['gen'] / steps:.2f}, update {timing['update_actor'] / steps:.2f}), "
            f"rewards {[round(r, 3) for r in result['step_reward']]}",
            flush=True,
        )
        return
    for _ in range(args.rounds):
        for mode in ("off", "on"):
            command = [sys.executable, __file__, "--worker", mode, "--workload", args.workload]
            command += ["--steps", str(args.steps), "--threads", str(args.threads)]
            output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            print(output.strip().splitlines()[-1], flush=True)


if __name__ == "__main__":
    main()

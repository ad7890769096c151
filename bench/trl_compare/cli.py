"""The command line: parse the options, then run the benchmark, a worker or a report.

`run_benchmark` builds the models, waits for a quiet machine, runs the workloads
(alternating ours and TRL, each run in its own worker process), prints the tables and
writes `results.json`. The parent process imports no torch.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from .settings import MATCHED, WORK, WORKLOADS, paths
from .summary import (
    LAST_STEPS,
    last_reward,
    median_step_tok_per_s,
    print_side_by_side,
    print_table,
    report,
    summarise,
    tok_per_cpu_s,
    tok_per_s,
)
from .workers import spawn, worker_main

LOAD_LIMIT = 1.5
LOAD_POLL_S = 30
LOAD_MAX_WAIT_S = 25 * 60


def wait_for_quiet_machine(max_wait_s: float, poll_s: float, verbose: bool) -> dict[str, Any]:
    """Poll the 1-minute load average until it is below LOAD_LIMIT or `max_wait_s` passed."""
    started = time.monotonic()
    while True:
        load1 = os.getloadavg()[0]
        waited = time.monotonic() - started
        if load1 < LOAD_LIMIT:
            if verbose:
                print(f"load average {load1:.2f} < {LOAD_LIMIT}: starting", flush=True)
            return {"load1": load1, "waited_s": waited, "gave_up": False}
        if waited >= max_wait_s:
            print(
                f"load average still {load1:.2f} after {waited:.0f} s: running anyway", flush=True
            )
            return {"load1": load1, "waited_s": waited, "gave_up": True}
        if verbose:
            print(f"load average {load1:.2f} >= {LOAD_LIMIT}; waiting...", flush=True)
        time.sleep(poll_s)


def parse_workloads(text: str) -> list[str]:
    names = [w.strip() for w in text.split(",") if w.strip()]
    for name in names:
        if name not in WORKLOADS:
            raise SystemExit(f"unknown workload {name!r}; choose from {sorted(WORKLOADS)}")
    return names


def parse_steps(text: str, names: list[str]) -> dict[str, int]:
    """`20` for every workload, or per workload: `20,long512=10`."""
    steps: dict[str, int] = {}
    default = None
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, _, value = part.rpartition("=")
        if name:
            parse_workloads(name)
            steps[name] = int(value)
        else:
            default = int(value)
    return {n: steps.get(n, default if default is not None else 20) for n in names}


def run_workload(
    name: str, runs_per: int, steps: int, out_dir: Path, args: argparse.Namespace, wait: bool
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """Alternating runs (ours, TRL, ours, ...) and, where it means something, the eval."""
    runs: list[dict[str, Any]] = []
    for i in range(1, runs_per + 1):
        seed = MATCHED.seed + i - 1
        for kind in ("ours", "trl"):
            # Our own previous run keeps the load average up for a while; wait (briefly)
            # for other jobs to be quiet before each run too, and record what we saw.
            gate = (
                wait_for_quiet_machine(args.run_wait, 5, verbose=False)
                if wait
                else {"load1": os.getloadavg()[0], "waited_s": 0.0, "gave_up": False}
            )
            run_dir = out_dir / f"{name}-{kind}-{i}"
            run_dir.mkdir(parents=True, exist_ok=True)
            started = time.perf_counter()
            run = spawn(
                kind,
                run_dir / "result.json",
                run_dir / "worker.log",
                *("--workload", name, "--run-dir", str(run_dir)),
                *("--steps", str(steps), "--seed", str(seed), "--threads", str(args.threads)),
            )
            run.update(
                run=i,
                seed=seed,
                load_before=gate["load1"],
                load_wait_s=gate["waited_s"],
                load_after=os.getloadavg()[0],
                process_s=time.perf_counter() - started,
            )
            runs.append(run)
            print(
                f"  {name} {kind} #{i} (seed {seed}): {tok_per_s(run):.0f} completion tok/s, "
                f"median step {median_step_tok_per_s(run):.0f} tok/s, "
                f"{tok_per_cpu_s(run):.0f} per CPU-s, {run['wall_s']:.1f} s for {steps} "
                f"steps, last-{LAST_STEPS} reward {last_reward(run):.3f} "
                f"(process {run['process_s']:.0f} s, load {gate['load1']:.2f} -> "
                f"{run['load_after']:.2f})",
                flush=True,
            )
    if not WORKLOADS[name].evaluate:
        return runs, None
    initial = str(paths(name)["model"])
    folders = [initial] + [r["final_dir"] for r in runs]
    evaluated = spawn(
        "eval",
        out_dir / f"eval-{name}.json",
        out_dir / f"eval-{name}.log",
        *("--workload", name, "--model-dirs", *folders),
    )
    for r in runs:
        r["eval_accuracy"] = evaluated["accuracy"][r["final_dir"]]
        r["weights_abs_sum"] = evaluated["weights_abs_sum"][r["final_dir"]]
    return runs, evaluated


def run_benchmark(args: argparse.Namespace) -> None:
    names = parse_workloads(args.workloads)
    runs_per = 1 if args.quick else args.runs
    steps = {n: 2 for n in names} if args.quick else parse_steps(args.steps, names)
    if not args.quick and min(steps.values()) < LAST_STEPS:
        raise SystemExit(f"--steps must be >= {LAST_STEPS}")
    wait = not (args.quick or args.no_wait)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out_dir = WORK / "runs" / stamp
    out_dir.mkdir(parents=True, exist_ok=True)
    print(f"bench: workloads={names} runs={runs_per} steps={steps} -> {out_dir}", flush=True)

    builds = {}
    for name in names:
        print(f"building/reusing the model of {name} ...", flush=True)
        builds[name] = spawn(
            "build",
            out_dir / f"build-{name}.json",
            out_dir / f"build-{name}.log",
            *("--workload", name),
        )
        b = builds[name]
        cached = "cached" if b["cached"] else f"built in {b['build_seconds']:.0f} s"
        print(f"  {name}: {b['num_params'] / 1e6:.2f}M params ({cached})", flush=True)

    meta = {
        name: spawn(
            "show-config",
            out_dir / f"config-{name}.json",
            None if args.show_config else out_dir / f"config-{name}.log",
            *("--workload", name, "--steps", str(steps[name])),
            echo=args.show_config,
        )
        for name in names
    }
    for name in names:
        print(f"  {name}: ours multiplies linear layers with {meta[name]['our_cpu_linear_kernel']}")
    start_load = {"load1": os.getloadavg()[0], "waited_s": 0.0, "gave_up": False}
    if wait:
        start_load = wait_for_quiet_machine(LOAD_MAX_WAIT_S, LOAD_POLL_S, verbose=True)
    bench_started = time.monotonic()
    results: dict[str, Any] = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "meta": meta,
        "matched": {n: dataclasses.asdict(WORKLOADS[n].matched) for n in names},
        "steps": steps,
        "runs_per_trainer": runs_per,
        "start_load": start_load,
        "workloads": {},
    }
    summaries: dict[str, dict[str, Any]] = {}
    for name in names:
        runs, evaluated = run_workload(name, runs_per, steps[name], out_dir, args, wait)
        initial = evaluated["accuracy"][str(paths(name)["model"])] if evaluated else None
        summaries[name] = summarise(runs, initial)
        results["workloads"][name] = {
            "build": builds[name],
            "runs": runs,
            "eval": evaluated,
            "summary": summaries[name],
        }
        print_table(name, builds[name], runs, summaries[name])
        if not args.keep_weights:
            for r in runs:  # weights and checkpoints; result.json and worker.log stay
                for sub in ("ckpt", "trl-out", "trl-final"):
                    shutil.rmtree(out_dir / f"{name}-{r['trainer']}-{r['run']}" / sub, True)
    print_side_by_side(summaries)
    results["total_s"] = time.monotonic() - bench_started
    results["load1_at_end"] = os.getloadavg()[0]
    (out_dir / "results.json").write_text(json.dumps(results, indent=1))
    print(
        f"\ntotal {results['total_s'] / 60:.1f} min after the start gate; load average at start "
        f"{start_load['load1']:.2f}, at end {results['load1_at_end']:.2f}; "
        f"results: {out_dir / 'results.json'}"
    )


def main(description: str) -> None:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--workloads",
        "--sizes",
        default="demo,large,long128,long512",
        help=f"comma list of: {', '.join(WORKLOADS)}",
    )
    parser.add_argument("--runs", type=int, default=3, help="runs per trainer and workload")
    parser.add_argument(
        "--steps",
        default="20,long128=10,long128-bf16=10,long128-torch-kernels=10,long512=5",
        help="optimizer steps per run: one number, and/or per workload (name=steps)",
    )
    parser.add_argument("--quick", action="store_true", help="1 run x 2 steps per workload")
    parser.add_argument("--no-wait", action="store_true", help="skip waiting for a quiet machine")
    parser.add_argument(
        "--run-wait",
        type=float,
        default=60.0,
        help="before each run, wait up to this many seconds for load average < 1.5",
    )
    parser.add_argument("--keep-weights", action="store_true", help="keep every run's weights")
    parser.add_argument(
        "--threads",
        type=int,
        default=2,
        help="torch threads of every worker, both trainers alike (0: torch's default); "
        "1 is steadier on a machine shared with other jobs",
    )
    parser.add_argument(
        "--show-config", action="store_true", help="print both trainers' effective configs"
    )
    parser.add_argument("--report", metavar="RESULTS_JSON", help="print the tables of a past run")
    # worker-only arguments
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--workload", help=argparse.SUPPRESS)
    parser.add_argument("--run-dir", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=MATCHED.seed, help=argparse.SUPPRESS)
    parser.add_argument("--model-dirs", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        if args.worker in ("ours", "trl", "show-config"):
            args.steps = int(args.steps)
        if args.threads > 0:  # the same for both trainers (and the evaluator)
            import torch

            torch.set_num_threads(args.threads)
        worker_main(args)
    elif args.report:
        report(Path(args.report))
    else:
        run_benchmark(args)

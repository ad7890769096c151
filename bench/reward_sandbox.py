"""Reward sandbox throughput: calls/s of a trivial reward, sandboxed vs in-process.

Runs the in-process baseline, a 1-worker pool, a 2-worker pool, and a 2-worker pool of
the same reward in verl's batch form (one call per chunk of 64), and the built-in `arith`
as a run's sandbox scores it (the batch form added, `builtin_sandbox_source`) and as it
was scored before that (a fork per row), in alternation (so
background load hits each alike) and prints the median and range of each, plus the CPU
time each call costs (this process, the zygotes and everything they forked), which
other load on the machine does not change: 1000 / cpu_ms is the calls/s one fully
available core would give.

    .venv/bin/python bench/reward_sandbox.py [--rounds 7] [--batch 512]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import psutil

from trainer.rewards import (
    InProcessScorer,
    RewardRequest,
    RewardScorer,
    SandboxPool,
    load_reward,
)
from trainer.rewards.builtins import builtin_source
from trainer.rewards.sandbox.scorers import builtin_sandbox_source

CODE = """
def compute_score(data_source, solution_str, ground_truth, extra_info, **kwargs):
    return 1.0 if solution_str.strip() == str(ground_truth) else 0.0
"""
BATCH_CODE = """
def compute_score(data_sources, solution_strs, ground_truths, extra_infos, **kwargs):
    return [1.0 if s.strip() == str(g) else 0.0 for s, g in zip(solution_strs, ground_truths)]
"""


def cpu_seconds(scorer) -> float:
    """CPU used so far by this process and the scorer's zygotes with their reaped children."""
    pids = [os.getpid(), *getattr(scorer, "worker_pids", [])]
    total = 0.0
    for pid in pids:
        t = psutil.Process(pid).cpu_times()
        total += (
            t.user + t.system + (t.children_user + t.children_system if pid != pids[0] else 0.0)
        )
    return total


def measure(scorer, requests) -> tuple[float, float]:
    """(calls/s, CPU milliseconds per call)."""
    cpu_before = cpu_seconds(scorer)
    started = time.perf_counter()
    results = scorer.score_batch(requests)
    elapsed = time.perf_counter() - started
    cpu = cpu_seconds(scorer) - cpu_before
    errors = [r.error for r in results if r.error]
    if errors:
        raise RuntimeError(f"{len(errors)} reward errors, first: {errors[0]}")
    return len(results) / elapsed, cpu * 1000 / len(results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--batch", type=int, default=512, help="requests per score_batch")
    args = parser.parse_args()
    requests = [
        RewardRequest("bench", str(i % 7), str(i % 5), {"index": i}) for i in range(args.batch)
    ]
    loaded = load_reward(CODE)
    scorers: dict[str, RewardScorer] = {
        "in-process": InProcessScorer(loaded.fn),
        "sandbox, 1 worker": SandboxPool(CODE, workers=1),
        "sandbox, 2 workers": SandboxPool(CODE, workers=2),
        "batch form, 2 workers": SandboxPool(BATCH_CODE, workers=2),
        "arith, a fork per row": SandboxPool(builtin_source("arith"), workers=2),
        "arith, as a run scores": SandboxPool(builtin_sandbox_source("arith"), workers=2),
    }
    try:
        for scorer in scorers.values():  # warm up
            measure(scorer, requests[:32])
        samples: dict[str, list[float]] = {name: [] for name in scorers}
        cpu_ms: dict[str, list[float]] = {name: [] for name in scorers}
        for _ in range(args.rounds):
            for name, scorer in scorers.items():
                rate, cpu = measure(scorer, requests)
                samples[name].append(rate)
                cpu_ms[name].append(cpu)
    finally:
        for scorer in scorers.values():
            scorer.close()
    load = os.getloadavg()[0]
    print(
        f"{args.rounds} alternating rounds of {args.batch} calls, {os.cpu_count()} CPUs, "
        f"load average {load:.2f}"
    )
    summary, cpu_summary = {}, {}
    for name, values in samples.items():
        median = statistics.median(values)
        cpu = statistics.median(cpu_ms[name])
        summary[name], cpu_summary[name] = round(median), round(cpu, 4)
        print(
            f"  {name:22s} median {median:10.0f} calls/s   (min {min(values):.0f}, "
            f"max {max(values):.0f})   CPU {cpu:.3f} ms/call"
        )
    report = {
        "calls_per_s_median": summary,
        "cpu_ms_per_call_median": cpu_summary,
        "batch": args.batch,
        "rounds": args.rounds,
        "load_average": round(load, 2),
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()

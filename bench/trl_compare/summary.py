"""Per-run figures, the summary of a workload's runs, and the tables printed from them.

`summarise` gives each trainer's medians, the per-phase seconds per step and the ours/TRL
ratios; `print_table` and `print_side_by_side` print them as Markdown tables; `report`
prints them again from a saved `results.json`.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

from .settings import PHASES, WORKLOADS, paths

LAST_STEPS = 5  # training reward is averaged over this many final steps


def tok_per_s(run: dict[str, Any]) -> float:
    return float(run["completion_tokens"] / run["wall_s"])


def tok_per_cpu_s(run: dict[str, Any]) -> float:
    """Completion tokens per CPU-second of the worker (all its threads): less sensitive to
    other jobs on the machine than wall time, though contention still costs some CPU."""
    return float(run["completion_tokens"] / run["cpu_s"])


def median_step_tok_per_s(run: dict[str, Any]) -> float:
    """Median over the run's steps of (step's completion tokens / step's wall time): on a
    shared machine, other jobs that slow down a minority of the steps do not move it."""
    return statistics.median(
        tokens / seconds for tokens, seconds in zip(run["step_tokens"], run["step_s"], strict=True)
    )


def first_reward(run: dict[str, Any]) -> float:
    return statistics.fmean(run["step_reward"][:LAST_STEPS])


def last_reward(run: dict[str, Any]) -> float:
    return statistics.fmean(run["step_reward"][-LAST_STEPS:])


def ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def eval_accuracy(run: dict[str, Any]) -> float:
    value = run.get("eval_accuracy")
    return float("nan") if value is None else float(value)


METRICS = {  # key -> (label, per-run function, format)
    "tok_per_s": ("completion tok/s (wall)", tok_per_s, ".0f"),
    "step_tok_per_s": ("median per-step tok/s", median_step_tok_per_s, ".0f"),
    "tok_per_cpu_s": ("completion tok per CPU-s", tok_per_cpu_s, ".0f"),
    "last_reward": (f"train reward, last {LAST_STEPS} steps", last_reward, ".3f"),
    "eval_accuracy": ("eval greedy accuracy", eval_accuracy, ".3f"),
}
PHASE_LABELS = {
    "gen": "generation",
    "reward": "reward",
    "old_log_prob": "old log-probs",
    "ref": "ref log-probs",
    "update": "update (fwd/bwd + optimizer)",
    "sync": "weight sync",
    "other": "other",
}


def phase_per_step(run: dict[str, Any], phase: str) -> float:
    return float(run["phase_s"].get(phase, 0.0)) / len(run["step_s"])


def summarise(runs: list[dict[str, Any]], initial_accuracy: float | None) -> dict[str, Any]:
    ours = [r for r in runs if r["trainer"] == "ours"]
    trl = [r for r in runs if r["trainer"] == "trl"]
    pairs = list(zip(ours, trl, strict=True))
    median = {
        name: {key: statistics.median(fn(r) for r in group) for key, (_, fn, _) in METRICS.items()}
        for name, group in (("ours", ours), ("trl", trl))
    }
    phases = {
        name: {ph: statistics.median(phase_per_step(r, ph) for r in group) for ph in PHASES}
        for name, group in (("ours", ours), ("trl", trl))
    }
    return {
        "initial_accuracy": initial_accuracy,
        "median": median,
        "phase_s_per_step": phases,
        # pair i = ours run i and TRL run i (adjacent in time, same seed)
        "median_pair_ratio": {
            key: statistics.median(ratio(fn(a), fn(b)) for a, b in pairs)
            for key, (_, fn, _) in METRICS.items()
        },
        "ratio_of_medians": {
            key: ratio(median["ours"][key], median["trl"][key]) for key in METRICS
        },
    }


def print_table(
    name: str, info: dict[str, Any], runs: list[dict[str, Any]], s: dict[str, Any]
) -> None:
    workload = WORKLOADS[name]
    m = workload.matched
    print(
        f"\n### {name}: {info['num_params'] / 1e6:.1f}M parameters ({workload.note}; "
        f"{m.prompts_per_step} prompts x {m.generations}, max {m.max_new_tokens} new tokens, "
        f"micro-batch {m.micro_batch}, reward {workload.reward})\n"
    )
    if s["initial_accuracy"] is not None:
        print(f"Greedy accuracy of the initial weights: {s['initial_accuracy']:.3f}\n")
    print(
        "| run | trainer | seed | completion tokens | wall s | median s/step | gen s "
        "| completion tok/s | median per-step tok/s | tok per CPU-s "
        "| train reward first/last 5 steps | eval greedy acc | load1 before/after |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        print(
            f"| {r['run']} | {r['trainer']} | {r['seed']} | {r['completion_tokens']} "
            f"| {r['wall_s']:.1f} | {statistics.median(r['step_s']):.2f} | {r['gen_s']:.1f} "
            f"| {tok_per_s(r):.0f} | {median_step_tok_per_s(r):.0f} | {tok_per_cpu_s(r):.0f} "
            f"| {first_reward(r):.3f} / {last_reward(r):.3f} | {eval_accuracy(r):.3f} "
            f"| {r['load_before']:.2f} / {r['load_after']:.2f} |"
        )
    ph = s["phase_s_per_step"]
    print("\n| phase, s per step (median of runs) | ours | TRL |")
    print("|---|---|---|")
    for phase, label in PHASE_LABELS.items():
        print(f"| {label} | {ph['ours'][phase]:.3f} | {ph['trl'][phase]:.3f} |")
    med, pr, rm = s["median"], s["median_pair_ratio"], s["ratio_of_medians"]
    print(
        "\n| | ours (median) | TRL (median) | median of per-pair ratios ours/TRL "
        "| ratio of medians |"
    )
    print("|---|---|---|---|---|")
    for key, (label, _, fmt) in METRICS.items():
        print(
            f"| {label} | {med['ours'][key]:{fmt}} | {med['trl'][key]:{fmt}} "
            f"| {pr[key]:.2f}x | {rm[key]:.2f}x |"
        )
    sys.stdout.flush()


def print_side_by_side(summaries: dict[str, dict[str, Any]]) -> None:
    """One line per workload: the figures the goals are stated in."""
    print(
        "\n## All workloads\n\n| workload | ours tok/s | TRL tok/s "
        "| median of per-pair ratios | train reward last 5 (ours / TRL) "
        "| s/step ours: gen + update + rest | s/step TRL: gen + update + rest |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, s in summaries.items():
        med, ph = s["median"], s["phase_s_per_step"]

        def split(who: str, ph: dict[str, Any] = ph) -> str:
            rest = sum(v for k, v in ph[who].items() if k not in ("gen", "update"))
            return f"{ph[who]['gen']:.2f} + {ph[who]['update']:.2f} + {rest:.2f}"

        print(
            f"| {name} | {med['ours']['tok_per_s']:.0f} | {med['trl']['tok_per_s']:.0f} "
            f"| **{s['median_pair_ratio']['tok_per_s']:.2f}x** "
            f"| {med['ours']['last_reward']:.3f} / {med['trl']['last_reward']:.3f} "
            f"| {split('ours')} | {split('trl')} |"
        )
    sys.stdout.flush()


def report(path: Path) -> None:
    """Print the tables again from a results.json (e.g. after changing the summary)."""
    results = json.loads(path.read_text())
    runs = results["runs_per_trainer"]
    print(f"{results.get('command', '')}: steps {results['steps']}, {runs} runs per trainer")
    summaries = {}
    for name, data in results["workloads"].items():
        evaluated = data["eval"]
        initial = evaluated["accuracy"][str(paths(name)["model"])] if evaluated else None
        summaries[name] = summarise(data["runs"], initial)
        print_table(name, data["build"], data["runs"], summaries[name])
    print_side_by_side(summaries)

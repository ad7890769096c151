"""`rlstudio sweeps list|watch`: a sweep's trials as lines of text, and following them
until the sweep ends. Django-free, like the rest of the remote commands."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import IO, Any

from studio.cli.run_watch import format_number
from studio.client import Client

TERMINAL = frozenset({"finished", "stopped"})
STATES = ("running", "complete", "pruned", "failed", "stopped")
TRIAL_HEAD = f"{'TRIAL':>5}  {'STATE':<8}  {'VALUE':>8}  {'STEPS':>5}  {'RUN':<24}  PARAMS"


def _value(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return "null" if value is None else str(value).lower()
    if isinstance(value, float):
        return format_number(value)
    return str(value)


def params_text(params: dict[str, Any]) -> str:
    return " ".join(f"{name}={_value(value)}" for name, value in params.items())


def trial_line(trial: dict[str, Any]) -> str:
    """One trial: number, state, metric value, latest step, run, parameters, and why it
    was stopped when it was."""
    run = trial.get("run")
    run_text = f"#{run['id']} {run['name']}" if run else "-"
    value = "-" if trial["value"] is None else format_number(trial["value"])
    line = (
        f"{trial['number']:>5}  {trial['state']:<8}  {value:>8}  {trial['steps']:>5}  "
        f"{run_text[:24]:<24}  {params_text(trial['params'])}"
    )
    return f"{line}  ({trial['stop_reason']})" if trial.get("stop_reason") else line


def counts_text(sweep: dict[str, Any]) -> str:
    """'5/8: 2 running, 3 complete': trials made of the budget, by state."""
    counts = sweep["trial_counts"]
    made = sum(counts.values())
    states = ", ".join(f"{counts[s]} {s}" for s in STATES if counts.get(s))
    return f"{made}/{sweep['max_trials']}" + (f": {states}" if states else "")


def best_text(sweep: dict[str, Any]) -> str:
    best = sweep.get("best")
    return "-" if not best else f"#{best['number']} {format_number(best['value'])}"


def summary_line(sweep: dict[str, Any]) -> str:
    reason = f" ({sweep['status_reason']})" if sweep.get("status_reason") else ""
    return (
        f"sweep {sweep['id']} {sweep['name']}: {sweep['status']}{reason}; {sweep['method']}, "
        f"{sweep['direction']} {sweep['metric_label']}; trials {counts_text(sweep)}; "
        f"best {best_text(sweep)}"
    )


def list_lines(sweeps: list[dict[str, Any]]) -> list[str]:
    lines = [f"{'ID':>6}  {'NAME':<24}  {'STATUS':<8}  {'METHOD':<6}  {'BEST':<16}  TRIALS"]
    for s in sweeps:
        lines.append(
            f"{s['id']:>6}  {s['name'][:24]:<24}  {s['status']:<8}  {s['method']:<6}  "
            f"{best_text(s)[:16]:<16}  {counts_text(s)}"
        )
    return lines


def _row_key(trial: dict[str, Any]) -> tuple[Any, ...]:
    run = trial.get("run") or {}
    return (trial["state"], trial["value"], trial["steps"], trial["stop_reason"], run.get("id"))


def succeeded(sweep: dict[str, Any]) -> bool:
    """A sweep that finished with a best trial; a stopped one, or one none of whose
    trials completed, did not."""
    return sweep["status"] == "finished" and sweep.get("best") is not None


def watch_sweep(
    client: Client,
    sweep_id: int,
    interval_s: float,
    out: IO[str],
    *,
    once: bool = False,
    sleep: Callable[[float], None] = time.sleep,
) -> bool:
    """Poll the sweep every `interval_s`: print its status when it changes and each trial
    row when the trial is new or changed; when the sweep ends (or after one poll with
    `once`), print its summary and return whether it finished with a best trial."""
    status: str | None = None
    seen: dict[int, tuple[Any, ...]] = {}
    print(f"{'TIME':<8}  {TRIAL_HEAD}", file=out)
    while True:
        sweep = client.sweep(sweep_id)
        if status is None:
            print(f"{_now()}  sweep {sweep_id}: {sweep['status']}", file=out)
        for trial in sweep["trials"]:
            key = _row_key(trial)
            if seen.get(trial["number"]) != key:
                seen[trial["number"]] = key
                print(f"{_now()}  {trial_line(trial)}", file=out)
        if status is not None and sweep["status"] != status:  # after the trials that ended it
            print(f"{_now()}  sweep {sweep_id}: {status} -> {sweep['status']}", file=out)
        status = sweep["status"]
        out.flush()
        if once or status in TERMINAL:
            print(summary_line(sweep), file=out, flush=True)
            if status == "finished":
                return succeeded(sweep)
            return status != "stopped"
        sleep(interval_s)


def _now() -> str:
    return datetime.now().strftime("%H:%M:%S")

"""`rlstudio runs watch`: follow a run's status and latest metrics until it ends.

Django-free, like the rest of the remote commands (studio.client only)."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import IO

from studio.client import Client

TERMINAL = frozenset({"succeeded", "failed", "cancelled"})
# Shown when the run has them (else its first few keys).
WATCH_KEYS = ("critic/score/mean", "actor/pg_loss", "actor/entropy", "perf/throughput")


def watch_run(
    client: Client,
    run_id: int,
    wanted: list[str] | None,
    interval_s: float,
    out: IO[str],
    sleep: Callable[[float], None] = time.sleep,
) -> bool:
    """Poll the run every `interval_s`: print each status change and, when the latest
    step moves, one line of metrics (`wanted`, or a few useful ones); when the run ends,
    return whether it succeeded."""
    status: str | None = None
    last_step: int | None = None
    while True:
        detail = client.run(run_id)
        if detail["status"] != status:
            reason = f" ({detail['status_reason']})" if detail.get("status_reason") else ""
            was = f"{status} -> " if status else ""
            print(f"{_now()} run {run_id}: {was}{detail['status']}{reason}", file=out)
            status = detail["status"]
        line = _latest_metrics(client, run_id, wanted)
        if line is not None and line[0] != last_step:
            last_step = line[0]
            print(f"{_now()} step {line[0]}: {line[1]}", file=out, flush=True)
        if status in TERMINAL:
            if status != "succeeded" and detail.get("last_error"):
                print(detail["last_error"].rstrip(), file=out)
            return status == "succeeded"
        sleep(interval_s)


def _latest_metrics(
    client: Client, run_id: int, wanted: list[str] | None
) -> tuple[int, str] | None:
    available = client.metric_keys(run_id)
    if not available:
        return None
    keys = wanted or [k for k in WATCH_KEYS if k in available] or available[:4]
    series = client.query_metrics([run_id], keys, points=10)["series"]
    latest = {s["key"]: (s["steps"][-1], s["values"][-1]) for s in series if s["steps"]}
    if not latest:
        return None
    step = max(step for step, _ in latest.values())
    parts = [
        f"{key}={format_number(latest[key][1])}"
        for key in keys
        if key in latest and latest[key][0] == step
    ]
    return step, " ".join(parts)


def format_number(value: float | None) -> str:
    return "nan" if value is None else f"{value:.4g}"


def _now() -> str:
    return datetime.now().strftime("%H:%M:%S")

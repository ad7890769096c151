"""Click -> results of a short evaluation and of "Ask the checkpoints", in Chromium, on a
running studio (issue #49).

First it trains the run both are asked of, as a user would: the demo preset on the run
form, 4 steps, a checkpoint every 2 (so the base model and the checkpoints at steps 2
and 4 are evaluated). Then, each repeat in a fresh browser context signed in as the given
user, with the cluster idle at each click:

- **evaluate**: the run page's *Evaluate checkpoints* (greedy, on the run's validation
  rows: the demo's held-out rows), timed from the click to the evaluation page showing
  `succeeded` with every model's row of the results table scored;
- **ask**: the rollout explorer's first training sample, *Ask the checkpoints* (greedy, one
  answer per model), timed from the click to every model's column holding its answer.

Times are the page's clock: a capture-phase listener takes the click, a check run every
animation frame takes the first frame in which the result is drawn (the app navigates
within one document, so the clock runs across the move to the evaluation page). After
each, it reads the evaluation's startup timeline (docs/operations.md, "Startup timeline")
and waits for its Ray job to end. It prints each time and the medians and writes them to
var/bench/first_results.json.

It needs a running studio with the demo (`rlstudio up`; docs/benchmarks.md gives the
command) and Debian's chromium, and downloads nothing:

    .venv/bin/python bench/first_results.py --url http://127.0.0.1:18410 \\
        --user bench --password ... [--project demo] [-n 5]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
from pathlib import Path
from typing import Any

import requests

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.first_chart import (  # noqa: E402
    _ended,
    cluster_idle,
    fill_run_form,
    machine,
    signed_in,
    signed_in_page,
    wait_for,
    write_json,
)
from tests.browser.harness import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

OUT = REPO / "var" / "bench" / "first_results.json"
TARGET_S = 5.0

# Installed before the click: the click on any button (page clock, ms since the epoch) and
# a per-frame check of `done`, whose first true frame is the result's time.
WATCH_JS = """(done) => {
  window.__clickAt = null;
  window.__doneAt = null;
  const now = () => performance.timeOrigin + performance.now();
  const check = new Function(`return (${done})`);
  document.addEventListener('click', (event) => {
    if (window.__clickAt === null && event.target.closest('button')) window.__clickAt = now();
  }, { capture: true });
  const frame = () => {
    if (window.__clickAt !== null && check()) { window.__doneAt = now(); return; }
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
}"""

# The evaluation page says succeeded and every row of the models table has its mean score.
EVALUATED_JS = """(() => {
  const pill = document.querySelector('header [data-status]');
  if (!pill || pill.textContent.trim() !== 'succeeded') return false;
  const rows = [...document.querySelectorAll('table[aria-label="Results by model"] tbody tr')];
  return rows.length >= 2 && rows.every((r) => /^\\d\\.\\d{3}$/.test(
    (r.querySelectorAll('td')[2] || {}).textContent || ''));
})()"""

# Every model's column of the answers holds its answer.
ANSWERED_JS = """(() => {
  const columns = [...document.querySelectorAll('[data-testid="answer-column"]')];
  return columns.length >= 2
    && columns.every((c) => c.querySelector('[data-testid="answer"]') !== null);
})()"""


def train_the_run(browser: Any, session: requests.Session, args: argparse.Namespace) -> int:
    """The run evaluated: the demo preset from the run form, 4 steps, checkpoints at 2, 4."""
    context, page = signed_in_page(browser, session, args.url)
    try:
        steps = {"trainer.total_steps": "4", "checkpoint.save_every": "2"}
        fill_run_form(page, args.url, args.project, "evaluated", steps)
        page.get_by_role("button", name="Create run").click()
        page.wait_for_url(re.compile(r"/runs/\d+$"), timeout=30_000)
        run_id = int(page.url.rsplit("/", 1)[-1])
    finally:
        context.close()
    run = wait_for(f"run {run_id} to end", lambda: ended(session, args, run_id), 900, 1.0)
    if run["status"] != "succeeded":
        raise RuntimeError(f"the run to evaluate ended {run['status']}: {run.get('last_error')}")
    return run_id


def ended(session: requests.Session, args: argparse.Namespace, run_id: int) -> Any:
    return _ended(session.get(f"{args.url}/api/runs/{run_id}/", timeout=30).json())


def one_click(
    browser: Any,
    session: requests.Session,
    args: argparse.Namespace,
    what: str,
    run_id: int,
) -> dict[str, Any]:
    context, page = signed_in_page(browser, session, args.url)
    try:
        if what == "evaluate":
            page.goto(f"{args.url}/p/{args.project}/runs/{run_id}")
            button = page.get_by_role("button", name="Evaluate checkpoints")
            done = EVALUATED_JS
        else:
            page.goto(f"{args.url}/p/{args.project}/runs/{run_id}/rollouts?split=train")
            page.wait_for_selector("[data-testid=list-status][data-state=ready]")
            detail = page.get_by_role("region", name=re.compile(r"^Sample \d+$"))
            button = detail.get_by_role("button", name="Ask the checkpoints")
            done = ANSWERED_JS
        button.wait_for()
        page.wait_for_load_state("networkidle")  # the page settled: only the click is timed
        page.evaluate(WATCH_JS, done)
        button.click()
        page.wait_for_url(re.compile(r"/evaluations/\d+$"), timeout=30_000)
        evaluation = int(page.url.rsplit("/", 1)[-1])
        page.wait_for_function("() => window.__doneAt !== null", timeout=args.timeout_s * 1000)
        click_ms, done_ms = page.evaluate("[window.__clickAt, window.__doneAt]")
    finally:
        context.close()
    run = wait_for(f"evaluation {evaluation} to end", lambda: ended(session, args, evaluation), 300)
    startup = run["attempts"][-1]["startup"]
    result = {
        "what": what,
        "evaluation": evaluation,
        "status": run["status"],
        "click_to_result_s": (done_ms - click_ms) / 1000,
        "create_to_first_metric_s": startup["total_s"],
        "phases_s": {
            p["name"]: p["seconds"] for p in startup["phases"] if p["seconds"] is not None
        },
    }
    wait_for("the cluster to be idle", lambda: cluster_idle(session, args.url, args.project), 120)
    return result


def summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for what in ("evaluate", "ask"):
        mine = [r for r in results if r["what"] == what]
        if not mine:
            continue
        times = [r["click_to_result_s"] for r in mine]
        names = list(dict.fromkeys(name for r in mine for name in r["phases_s"]))
        out[what] = {
            "median_s": statistics.median(times),
            "min_s": min(times),
            "max_s": max(times),
            "under_target": statistics.median(times) < TARGET_S,
            "phases_s": {
                name: statistics.median(r["phases_s"][name] for r in mine if name in r["phases_s"])
                for name in names
            },
        }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the studio, e.g. http://127.0.0.1:18410")
    parser.add_argument("--user", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--project", default="demo", help="its slug (default: the demo's)")
    parser.add_argument("-n", "--repeats", type=int, default=5, help="of each (default 5)")
    parser.add_argument("--run", type=int, default=0, help="evaluate this run (0: train one)")
    parser.add_argument("--timeout-s", type=float, default=180, help="per result")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    session = signed_in(args.url, args.user, args.password)
    wait_for("the cluster to be idle", lambda: cluster_idle(session, args.url, args.project), 600)
    about = machine()
    results: list[dict[str, Any]] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            run_id = args.run or train_the_run(browser, session, args)
            for index in range(1, args.repeats + 1):
                for what in ("evaluate", "ask"):  # alternated: both see the same machine
                    result = one_click(browser, session, args, what, run_id)
                    results.append(result)
                    print(
                        f"[{index}/{args.repeats}] {what}: evaluation {result['evaluation']} "
                        f"click -> result {result['click_to_result_s']:.2f} s "
                        f"({result['status']}), load {os.getloadavg()[0]:.2f}",
                        flush=True,
                    )
        finally:
            browser.close()
    medians = summary(results)
    for what, figures in medians.items():
        print(
            f"\n{what}: median {figures['median_s']:.2f} s "
            f"({figures['min_s']:.2f}-{figures['max_s']:.2f}), target < {TARGET_S:.0f} s: "
            f"{'met' if figures['under_target'] else 'NOT met'}"
        )
        for name, seconds in figures["phases_s"].items():
            print(f"  {name:<22} {seconds:6.2f}")
    write_json(args.out, about, args, run=run_id, results=results, median=medians)
    return 0


if __name__ == "__main__":
    sys.exit(main())

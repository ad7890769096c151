"""Create -> first chart point, in Chromium, on a running studio (issue #49).

Each repeat, in a fresh browser context signed in as the given user: opens the project's
run form (the demo preset, the project's only dataset chosen for it), clicks *Create
run*, and times the click to the first chart on the run page drawn with a point (page
clock: a MutationObserver on the charts' `data-ready` / `data-points`, the click taken by
a listener in the capture phase). Then it waits for the run to end and its Ray job to be
over (the cluster idle again), reads the attempt's startup timeline from the run's API
(docs/operations.md, "Startup timeline"), and goes on. It prints each run's time, the
median, and the median of each phase, and writes them to var/bench/first_chart.json.

Besides the phases, two spans the studio does not see: click -> `created` (the create
request) and `first_metric_stored` -> visible (the stream's event, the page's first series
request, drawing). Both compare the browser's clock (`performance.timeOrigin + now()`)
with the studio's, so the browser must run on the studio's machine.

It needs a running studio with the demo (`rlstudio up`; docs/benchmarks.md gives the
command) and Debian's chromium, and downloads nothing:

    .venv/bin/python bench/first_chart.py --url http://127.0.0.1:18410 \\
        --user bench --password ... [--project demo] [-n 10] [--total-steps 4]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import requests

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.browser.harness import CHROMIUM, CHROMIUM_ARGS, WIDE  # noqa: E402
from trainer.reporting.startup import PHASES  # noqa: E402

OUT = REPO / "var" / "bench" / "first_chart.json"
TERMINAL = ("succeeded", "failed", "cancelled")
RAY_ENDED = ("SUCCEEDED", "FAILED", "STOPPED", "LOST")

# The first metrics query the run page made after the click: when it started and ended.
SERIES_JS = """() => {
  const at = (ms) => performance.timeOrigin + ms;
  const query = performance.getEntriesByType('resource')
    .filter((e) => e.name.includes('/api/metrics/query') && at(e.startTime) >= window.__clickAt)
    .sort((a, b) => a.startTime - b.startTime)[0];
  return query ? [at(query.startTime), at(query.responseEnd)] : null;
}"""

# Installed before the click: when the first chart is drawn with a point (page clock, ms
# since the epoch), and when the click on the form's submit button happened.
WATCH_JS = """() => {
  window.__firstPoint = null;
  window.__clickAt = null;
  window.__firstMetricEvent = null;
  const now = () => performance.timeOrigin + performance.now();
  // When the run's stream delivers its first metrics event (the app's own EventSource).
  const Original = window.EventSource;
  window.EventSource = class extends Original {
    constructor(...args) {
      super(...args);
      super.addEventListener('metrics', () => {
        if (window.__firstMetricEvent === null) window.__firstMetricEvent = now();
      });
    }
  };
  const drawn = () => [...document.querySelectorAll('figure[data-ready="true"] [data-points]')]
    .some((el) => Number(el.dataset.points) > 0);
  const observer = new MutationObserver(() => {
    if (window.__firstPoint !== null || !drawn()) return;
    window.__firstPoint = now();
    observer.disconnect();
  });
  observer.observe(document.body, { subtree: true, childList: true, attributes: true,
    attributeFilter: ['data-ready', 'data-points'] });
  document.addEventListener('click', (event) => {
    const submit = event.target.closest('button[type=submit]');
    if (window.__clickAt === null && submit) window.__clickAt = now();
  }, { capture: true });
}"""


def signed_in(url: str, user: str, password: str) -> requests.Session:
    session = requests.Session()
    session.get(f"{url}/", timeout=30)
    session.headers["X-CSRFToken"] = session.cookies["csrftoken"]
    answer = session.post(
        f"{url}/api/auth/login", json={"username": user, "password": password}, timeout=30
    )
    answer.raise_for_status()
    session.headers["X-CSRFToken"] = session.cookies["csrftoken"]
    return session


def wait_for(what: str, check: Any, timeout_s: float, every_s: float = 0.5) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(every_s)
    raise TimeoutError(f"{what}: not within {timeout_s:.0f} s")


def cluster_idle(session: requests.Session, url: str, project: str) -> bool:
    """No run of the project is queued, starting, running or cancelling."""
    answer = session.get(
        f"{url}/api/runs/",
        params={"project": project, "status": ["queued", "starting", "running", "cancelling"]},
        timeout=30,
    )
    answer.raise_for_status()
    return int(answer.json()["count"]) == 0


def signed_in_page(browser: Any, session: requests.Session, url: str) -> tuple[Any, Any]:
    """A fresh browser context (empty cache) with the session's cookies, and its page."""
    context = browser.new_context(viewport=WIDE)
    context.add_cookies(
        [{"name": c.name, "value": c.value or "", "url": url} for c in session.cookies]
    )
    return context, context.new_page()


def fill_run_form(page: Any, url: str, project: str, name: str, config: dict[str, str]) -> None:
    """The project's run form on the demo preset (its only dataset chosen), named `name`,
    with the config fields of `config` (path -> text) set, each section opened first."""
    page.goto(f"{url}/p/{project}/runs/new")
    page.get_by_label("Preset", exact=True).wait_for()
    data = page.get_by_label("Training data", exact=True)
    wait_for("a dataset chosen on the form", lambda: data.input_value() != "", 30, 0.1)
    page.get_by_label("Run name", exact=True).fill(name)
    for path, value in config.items():
        field = page.locator(f'[data-path="{path}"]')
        if not field.is_visible():
            section = path.split(".")[0]
            page.locator("summary", has_text=re.compile(rf"^{section}", re.I)).click()
        field.fill(value)


def write_json(out: Path, about: dict[str, Any], args: argparse.Namespace, **figures: Any) -> None:
    """The machine, the arguments (no password) and the figures, to `out`."""
    out.parent.mkdir(parents=True, exist_ok=True)
    record = {"machine": about, "args": vars(args) | {"out": str(out), "password": "*"}}
    out.write_text(json.dumps(record | figures, indent=2))
    print(f"\nwrote {out}")


def one_run(
    browser: Any, session: requests.Session, args: argparse.Namespace, index: int
) -> dict[str, Any]:
    context, page = signed_in_page(browser, session, args.url)
    try:
        steps = {"trainer.total_steps": str(args.total_steps)} if args.total_steps else {}
        fill_run_form(page, args.url, args.project, f"first-chart-{index}", steps)
        page.evaluate(WATCH_JS)
        page.get_by_role("button", name="Create run").click()
        page.wait_for_url(re.compile(r"/runs/\d+$"), timeout=30_000)
        run_id = int(page.url.rsplit("/", 1)[-1])
        page.wait_for_function("() => window.__firstPoint !== null", timeout=args.timeout_s * 1000)
        click_ms, point_ms, event_ms = page.evaluate(
            "[window.__clickAt, window.__firstPoint, window.__firstMetricEvent]"
        )
        series = page.evaluate(SERIES_JS)
    finally:
        context.close()
    # Read once the run has ended: its first rollout and step come after the first chart.
    ended = wait_for(
        f"run {run_id} to end",
        lambda: _ended(session.get(f"{args.url}/api/runs/{run_id}/", timeout=30).json()),
        args.run_timeout_s,
        1.0,
    )
    startup = ended["attempts"][-1]["startup"]
    marks = {p["name"]: p for p in startup["phases"]}
    created = marks["created"]["at"]
    stored = marks["first_metric_stored"]["at"]
    result = {
        "run": run_id,
        "status": ended["status"],
        "click_to_chart_s": (point_ms - click_ms) / 1000,
        "click_to_created_s": created - click_ms / 1000,
        "stored_to_visible_s": point_ms / 1000 - stored,
        # Where stored -> visible goes: the stream, the page's first series request, drawing.
        "stored_to_event_s": event_ms / 1000 - stored if event_ms else None,
        "event_to_series_s": (series[0] - event_ms) / 1000 if event_ms and series else None,
        "series_request_s": (series[1] - series[0]) / 1000 if series else None,
        "series_to_visible_s": (point_ms - series[1]) / 1000 if series else None,
        "create_to_first_metric_s": startup["total_s"],
        "phases_s": {p["name"]: p["seconds"] for p in startup["phases"] if p["at"] is not None},
        "order": [p["name"] for p in startup["phases"] if p["at"] is not None],
    }
    wait_for("the cluster to be idle", lambda: cluster_idle(session, args.url, args.project), 120)
    time.sleep(args.settle_s)  # the job's processes exit after Ray marks it ended
    return result


def _ended(run: dict[str, Any]) -> dict[str, Any] | None:
    if run["status"] not in TERMINAL:
        return None
    attempt = run["attempts"][-1] if run["attempts"] else None
    return run if attempt is None or attempt["ray_status"] in RAY_ENDED else None


def medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    def median_of(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    phases: dict[str, float] = {}
    for name in PHASES:
        values = [r["phases_s"][name] for r in runs if r["phases_s"].get(name) is not None]
        if values:
            phases[name] = statistics.median(values)
    display = ("stored_to_event_s", "event_to_series_s", "series_request_s", "series_to_visible_s")
    return {
        "click_to_chart_s": median_of("click_to_chart_s"),
        "click_to_created_s": median_of("click_to_created_s"),
        "create_to_first_metric_s": median_of("create_to_first_metric_s"),
        "stored_to_visible_s": median_of("stored_to_visible_s"),
        "display_s": {
            key: statistics.median(values)
            for key in display
            if (values := [r[key] for r in runs if r.get(key) is not None])
        },
        "phases_s": phases,
    }


def machine() -> dict[str, Any]:
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        "?",
    )
    return {
        "commit": commit + ("+dirty" if dirty else ""),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "load_1m_before": os.getloadavg()[0],
    }


def report(runs: list[dict[str, Any]], summary: dict[str, Any]) -> None:
    print()
    print(
        f"{'run':>6} {'click->chart':>13} {'click->created':>15} {'Create->metric':>15} "
        f"{'stored->visible':>16}  status"
    )
    for r in runs:
        print(
            f"{r['run']:>6} {r['click_to_chart_s']:>12.2f}s {r['click_to_created_s']:>14.2f}s "
            f"{r['create_to_first_metric_s']:>14.2f}s {r['stored_to_visible_s']:>15.2f}s  "
            f"{r['status']}"
        )
    print(
        f"{'median':>6} {summary['click_to_chart_s']:>12.2f}s "
        f"{summary['click_to_created_s']:>14.2f}s "
        f"{summary['create_to_first_metric_s']:>14.2f}s {summary['stored_to_visible_s']:>15.2f}s"
    )
    print("\nmedian seconds of first metric stored -> visible, by part:")
    for name, seconds in summary["display_s"].items():
        print(f"  {name:<22} {seconds:6.2f}")
    print("\nmedian seconds of each phase (since the phase reached before it):")
    for name, seconds in summary["phases_s"].items():
        print(f"  {name:<22} {seconds:6.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the studio, e.g. http://127.0.0.1:18310")
    parser.add_argument("--user", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--project", default="demo", help="its slug (default: the demo's)")
    parser.add_argument("-n", "--repeats", type=int, default=10)
    parser.add_argument(
        "--total-steps",
        type=int,
        default=0,
        help="set trainer.total_steps on the form (0: the preset's); the first chart comes "
        "before the first step either way, this only shortens the wait for the run's end",
    )
    parser.add_argument("--timeout-s", type=float, default=180, help="per first chart")
    parser.add_argument("--run-timeout-s", type=float, default=900, help="per run's end")
    parser.add_argument("--settle-s", type=float, default=3.0, help="pause between runs")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--label", default="", help="what was measured, kept in the JSON")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    session = signed_in(args.url, args.user, args.password)
    wait_for("the cluster to be idle", lambda: cluster_idle(session, args.url, args.project), 600)
    about = machine()
    runs: list[dict[str, Any]] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            for index in range(1, args.repeats + 1):
                result = one_run(browser, session, args, index)
                runs.append(result)
                print(
                    f"[{index}/{args.repeats}] run {result['run']}: click -> chart "
                    f"{result['click_to_chart_s']:.2f} s ({result['status']}), load "
                    f"{os.getloadavg()[0]:.2f}",
                    flush=True,
                )
        finally:
            browser.close()
    summary = medians(runs)
    report(runs, summary)
    write_json(args.out, about, args, runs=runs, median=summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())

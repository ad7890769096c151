"""The run page in headless Chromium: time to interactive with a big run, scrolling, and
how fast a metric emitted by a real trainer becomes visible on an open page.

Needs a running studio (`rlstudio up`, whose DATABASE_URL this process shares) with the
demo model, a user and a project, and Debian's chromium:

  (a) inserts a run with 20,000 steps x 40 metric keys (800k points, COPY, as
      bench/api_queries.py), opens its run page N times in a fresh browser context and
      times navigation -> every chart in the first screen drawn (`data-ready`), then
      scrolls the whole chart grid and records the frame intervals (p95, longest);
  (b) starts a real GRPO run (preset grpo-tiny-arith) with its page open on the reward
      chart, and for every step appended live (Plotly.extendTraces) takes
      visible time (page clock, a MutationObserver on the chart) - emit time (the
      trainer's clock in the record; same machine, same clock).

    DATABASE_URL=... .venv/bin/python bench/web_run_page.py --url http://127.0.0.1:PORT \\
        --user ada --password ... --project demo [--repeats 5] [--live-steps 16]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.api_queries import copy_rows, load, metric_rows

CHROMIUM = "/usr/lib/chromium/chromium"
REWARD_KEY = "critic/score/mean"
TERMINAL = ("succeeded", "failed", "cancelled")


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def insert_big_run(project_slug: str, username: str, steps: int) -> int:
    from django.contrib.auth.models import User

    from studio.projects.models import Project
    from studio.runs.models import Run

    user = User.objects.get(username=username)
    project = Project.objects.get(slug=project_slug)
    run = Run.objects.create(
        project=project, name=f"bench-{steps}-steps", config={}, created_by=user, status="succeeded"
    )
    started = time.perf_counter()
    n = copy_rows(
        "telemetry_metricpoint",
        ["run_id", "attempt", "seq", "step", "key", "value", "superseded"],
        metric_rows(run.pk, steps, random.Random(0)),
    )
    print(f"[load] run {run.pk}: {n} points in {time.perf_counter() - started:.1f} s, {load()}")
    return int(run.pk)


def session(url: str, username: str, password: str) -> requests.Session:
    s = requests.Session()
    s.get(f"{url}/", timeout=30)
    s.headers["X-CSRFToken"] = s.cookies["csrftoken"]
    r = s.post(f"{url}/api/auth/login", json={"username": username, "password": password})
    r.raise_for_status()
    s.headers["X-CSRFToken"] = s.cookies["csrftoken"]
    return s


def browser_context(browser: Any, s: requests.Session, url: str) -> Any:
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    context.add_cookies([{"name": c.name, "value": c.value or "", "url": url} for c in s.cookies])
    return context


SCROLL_JS = """async () => {
  const frames = [];
  let last = performance.now();
  const total = document.documentElement.scrollHeight - innerHeight;
  for (let y = 0; y <= total; y += 60) {
    scrollTo(0, y);
    await new Promise((r) => requestAnimationFrame(r));
    const now = performance.now();
    frames.push(now - last);
    last = now;
  }
  return frames;
}"""


def time_to_interactive(
    browser: Any, s: requests.Session, url: str, page_url: str
) -> tuple[float, int]:
    context = browser_context(browser, s, url)
    page = context.new_page()
    started = time.perf_counter()
    page.goto(page_url)
    page.locator('figure[data-ready="true"]').first.wait_for(timeout=60_000)
    # Interactive: every chart mounted in the first screen has drawn.
    page.wait_for_function(
        "() => { const f = [...document.querySelectorAll('figure[data-metric]')];"
        " return f.length > 0 && f.every((x) => x.dataset.ready === 'true'); }",
        timeout=60_000,
    )
    elapsed = time.perf_counter() - started
    mounted = page.locator("figure[data-metric]").count()
    context.close()
    return elapsed, mounted


OBSERVE_JS = """(key) => {
  window.__visible = [];
  const chart = document.querySelector(`figure[data-metric="${key}"] [data-points]`);
  new MutationObserver(() => {
    const xs = chart.data.map((t) => t.x).filter((x) => x && x.length);
    const step = Math.max(...xs.map((x) => x[x.length - 1]));
    window.__visible.push([step, Date.now() / 1000]);
  }).observe(chart, { attributes: true, attributeFilter: ["data-live-points"] });
}"""


def live_latency(
    browser: Any, s: requests.Session, url: str, project: str, steps: int
) -> list[float]:
    datasets = s.get(f"{url}/api/datasets/", params={"project": project})
    datasets.raise_for_status()
    found = datasets.json()["results"]
    if not found:
        raise SystemExit(f"project {project!r} has no dataset to train on (the demo one?)")
    run = s.post(
        f"{url}/api/runs/",
        json={
            "project": project,
            "name": "bench-live",
            "preset": "grpo-tiny-arith",
            "dataset": found[0]["id"],  # its latest version, recorded as that version
            "overrides": [f"trainer.total_steps={steps}", "trainer.val_before_train=false"],
        },
    )
    run.raise_for_status()
    run_id = run.json()["id"]
    context = browser_context(browser, s, url)
    page = context.new_page()
    page.goto(f"{url}/p/{project}/runs/{run_id}?charts={REWARD_KEY}")
    page.locator(f'figure[data-metric="{REWARD_KEY}"][data-ready="true"]').wait_for(timeout=300_000)
    page.evaluate(OBSERVE_JS, REWARD_KEY)
    deadline = time.monotonic() + 600
    while s.get(f"{url}/api/runs/{run_id}/").json()["status"] not in (
        "succeeded",
        "failed",
        "cancelled",
    ):
        if time.monotonic() > deadline:
            raise SystemExit(f"run {run_id} did not finish in 600 s")
        time.sleep(1)
    page.wait_for_timeout(2000)
    visible = dict(page.evaluate("window.__visible"))
    context.close()
    from studio.telemetry.models import IngestedRecord

    records = IngestedRecord.objects.filter(run_id=run_id, kind="metrics")
    emitted = dict(records.values_list("step", "emitted_at"))
    return [visible[step] - emitted[step] for step in sorted(visible) if step in emitted]


def studio_arguments(description: str) -> argparse.ArgumentParser:
    """The studio, user and project a run-page bench signs in to."""
    parser = argparse.ArgumentParser(description=description)
    for name in ("--url", "--user", "--password", "--project"):
        parser.add_argument(name, required=True)
    return parser


def main() -> None:
    parser = studio_arguments(__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--live-steps", type=int, default=16)
    parser.add_argument("--run", type=int, help="reuse an inserted run instead of inserting one")
    parser.add_argument("--only", choices=["tti", "scroll", "live"], help="run one part")
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studio.settings")
    # Playwright's sync API runs an event loop in this thread; the ORM calls here are
    # plain blocking ones in the same thread (as in tests/browser/conftest.py).
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    import django

    django.setup()
    from playwright.sync_api import sync_playwright

    run_id = args.run or insert_big_run(args.project, args.user, args.steps)
    s = session(args.url, args.user, args.password)
    keys = s.get(f"{args.url}/api/runs/{run_id}/metrics/keys").json()["keys"]
    print(f"[run] {run_id}: {len(keys)} keys, {load()}")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page_url = f"{args.url}/p/{args.project}/runs/{run_id}"
        if args.only in (None, "tti"):
            tti(browser, s, args, page_url, len(keys))
        if args.only in (None, "scroll"):
            scroll(browser, s, args, page_url)
        if args.only in (None, "live"):
            live(browser, s, args)
        browser.close()


def tti(browser: Any, s: requests.Session, args: Any, page_url: str, keys: int) -> None:
    time_to_interactive(browser, s, args.url, page_url)  # warm: plotly chunk cached
    times, mounted = [], 0
    for _ in range(args.repeats):
        elapsed, mounted = time_to_interactive(browser, s, args.url, page_url)
        times.append(elapsed)
    print(
        f"[tti] {args.steps} steps x {keys} keys: "
        f"median {statistics.median(times):.2f} s, "
        f"max {max(times):.2f} s (n={len(times)}; {mounted} of {keys} charts mounted "
        f"at first screen), {load()}"
    )


def scroll(browser: Any, s: requests.Session, args: Any, page_url: str) -> None:
    context = browser_context(browser, s, args.url)
    page = context.new_page()
    page.goto(page_url)
    page.locator('figure[data-ready="true"]').first.wait_for(timeout=60_000)
    frames = page.evaluate(SCROLL_JS)
    page.wait_for_timeout(3000)
    frames += page.evaluate(SCROLL_JS)  # second pass: charts mounted on the way down
    drawn = page.locator('figure[data-ready="true"]').count()
    context.close()
    print(
        f"[scroll] {len(frames)} frames: median {statistics.median(frames):.1f} ms, "
        f"p95 {p95(frames):.1f} ms, longest {max(frames):.0f} ms; "
        f"{drawn} charts drawn, {load()}"
    )


def live(browser: Any, s: requests.Session, args: Any) -> None:
    latencies = live_latency(browser, s, args.url, args.project, args.live_steps)
    print(
        f"[live] emit -> visible over {len(latencies)} steps appended live: "
        f"median {statistics.median(latencies) * 1000:.0f} ms, "
        f"p95 {p95(latencies) * 1000:.0f} ms, "
        f"max {max(latencies) * 1000:.0f} ms, {load()}"
    )


if __name__ == "__main__":
    main()

"""Where the run page's first screen goes: one load of a run page in headless Chromium,
broken down into requests (start, end, bytes), main-thread long tasks, the moments each
chart drew, and a sampled JavaScript CPU profile (self time per script and function).

Needs what bench/web_run_page.py needs (a running studio, a run with many keys):

    python bench/run_page_profile.py --url http://127.0.0.1:PORT --user ada \\
        --password ... --project demo --run ID [--top 15]
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.api_queries import load
from bench.web_run_page import CHROMIUM, browser_context, session, studio_arguments

# Before any page script: when each chart turned ready, and every long task.
RECORDER_JS = """
window.__ready = {};
window.__long = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) window.__long.push([e.startTime, e.duration]);
}).observe({ type: "longtask", buffered: true });
new MutationObserver((changes) => {
  for (const c of changes) {
    const f = c.target;
    if (f.dataset && f.dataset.ready === "true" && !(f.dataset.metric in window.__ready))
      window.__ready[f.dataset.metric] = performance.now();
  }
}).observe(document, { subtree: true, attributes: true, attributeFilter: ["data-ready"] });
"""

ALL_READY_JS = (
    "() => { const f = [...document.querySelectorAll('figure[data-metric]')];"
    " return f.length > 0 && f.every((x) => x.dataset.ready === 'true'); }"
)

ENTRIES_JS = """() => ({
  nav: performance.getEntriesByType("navigation")[0].toJSON(),
  resources: performance.getEntriesByType("resource").map((e) => ({
    name: e.name, start: e.startTime, ttfb: e.responseStart, end: e.responseEnd,
    bytes: e.transferSize, body: e.decodedBodySize })),
  ready: window.__ready,
  long: window.__long,
  marks: performance.getEntriesByType("mark").concat(performance.getEntriesByType("measure"))
    .map((e) => [e.name, e.startTime, e.duration]),
})"""


def short(url: str) -> str:
    path = url.split("://", 1)[-1].split("/", 1)[-1]
    return "/" + (path if len(path) < 110 else path[:107] + "...")


def self_times(profile: dict[str, Any]) -> tuple[Counter[str], Counter[str]]:
    """Self time (ms) per script URL and per function of a CDP CPU profile."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    by_url: Counter[str] = Counter()
    by_function: Counter[str] = Counter()
    deltas = profile["timeDeltas"]
    for sample, delta in zip(profile["samples"], [*deltas[1:], 0], strict=True):
        frame = nodes[sample]["callFrame"]
        url = frame["url"].rsplit("/", 1)[-1] or frame["functionName"] or "(native)"
        by_url[url] += delta / 1000
        name = f"{frame['functionName'] or '(anonymous)'} ({url}:{frame['lineNumber']})"
        by_function[name] += delta / 1000
    return by_url, by_function


def profile_once(browser: Any, s: Any, url: str, page_url: str, top: int) -> None:
    context = browser_context(browser, s, url)
    page = context.new_page()
    page.add_init_script(RECORDER_JS)
    cdp = context.new_cdp_session(page)
    cdp.send("Profiler.enable")
    cdp.send("Profiler.setSamplingInterval", {"interval": 500})
    cdp.send("Profiler.start")
    started = time.perf_counter()
    page.goto(page_url)
    page.wait_for_function(ALL_READY_JS, timeout=60_000)
    elapsed = time.perf_counter() - started
    profile = cdp.send("Profiler.stop")["profile"]
    entries = page.evaluate(ENTRIES_JS)
    context.close()

    print(f"[profile] navigation -> every first-screen chart drawn: {elapsed:.2f} s, {load()}")
    nav = entries["nav"]
    print(
        f"  document: response {nav['responseEnd']:.0f} ms, DOMContentLoaded "
        f"{nav['domContentLoadedEventEnd']:.0f} ms"
    )
    print("  requests (ms from navigation start: start, first byte, end; bytes on wire/body):")
    for r in sorted(entries["resources"], key=lambda r: r["start"]):
        print(
            f"    {r['start']:7.0f} {r['ttfb']:7.0f} {r['end']:7.0f}  "
            f"{r['bytes']:>9,} / {r['body']:>9,}  {short(r['name'])}"
        )
    ready = sorted(entries["ready"].items(), key=lambda kv: kv[1])
    print(f"  charts drawn ({len(ready)}): " + ", ".join(f"{k} {t:.0f}" for k, t in ready))
    long_tasks = entries["long"]
    print(
        f"  long tasks: {len(long_tasks)}, {sum(d for _, d in long_tasks):.0f} ms in all; "
        + ", ".join(f"{s:.0f}+{d:.0f}" for s, d in long_tasks[:20])
    )
    if entries["marks"]:
        print("  marks and measures (start+duration ms):")
        for name, start, duration in sorted(entries["marks"], key=lambda m: m[1]):
            print(f"    {start:7.0f} +{duration:5.0f}  {name}")
    by_url, by_function = self_times(profile)
    print(
        "  JS self time by script (ms): "
        + ", ".join(f"{u} {t:.0f}" for u, t in by_url.most_common(top))
    )
    print("  JS self time, top functions (ms):")
    for name, t in by_function.most_common(top):
        print(f"    {t:7.1f}  {name}")


def main() -> None:
    parser = studio_arguments(__doc__.splitlines()[0])
    parser.add_argument("--run", type=int, required=True)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--query", default="", help="extra query string, e.g. axis=time")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    s = session(args.url, args.user, args.password)
    page_url = f"{args.url}/p/{args.project}/runs/{args.run}" + (
        f"?{args.query}" if args.query else ""
    )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        warm = browser_context(browser, s, args.url)  # plotly's chunk in the HTTP cache
        warm_page = warm.new_page()
        warm_page.goto(page_url)
        warm_page.wait_for_function(ALL_READY_JS, timeout=60_000)
        warm.close()
        profile_once(browser, s, args.url, page_url, args.top)
        browser.close()


if __name__ == "__main__":
    main()

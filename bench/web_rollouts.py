"""Rollout review in headless Chromium on a run with 200,000 samples.

Creates a throwaway database (``rlstudio_bench_web`` on the server of DATABASE_URL),
loads one run with 200k GRPO-shaped samples by COPY (bench/api_queries.py's generator:
25 groups of 8 per step) plus one group whose first sample carries token data for a
2,000-token response, starts uvicorn on it (serving the built frontend/dist), signs
in with Debian's Chromium (Playwright) and measures:

  (a) filter change -> first results: the time from a filter change in the explorer
      (reward range, step slider, full-text search, group signal) until the list shows
      the first page for the new filter (the status line's generation moved on and is
      ready), timed from Python around the real key presses;
  (b) scrolling: the list scrolled by 10 rows per animation frame until 10,000 rows
      have been loaded and passed; frame intervals measured in the page;
  (c) opening the group view (Enter in the explorer) and the per-token view of the
      2,000-token response (its link) until their content is drawn.

Prints median and p95 with the load average, then drops the database.

    (cd frontend && npm run build)
    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python bench/web_rollouts.py [--samples 200000] [--changes 30]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.api_queries import copy_rows, load, sample_rows, summary
from bench.web_studio import PASSWORD, PROJECT, USERNAME, BenchStudio, served, throwaway_studio

BENCH_DB = "rlstudio_bench_web"
LONG_TOKENS = 2000
SAMPLE_COLUMNS = [
    "run_id", "attempt", "seq", "position", "step", "split", "group_id", "data_source",
    "prompt", "response", "ground_truth", "score", "components", "advantage", "prompt_length",
    "response_length", "finish_reason", "error", "superseded", "created_at",
]  # fmt: skip
# (a): each change is a (what, action) pair; the actions cycle so every filter is timed.
SEARCHES = ["marzipan", '"the answer"', "apples -cookies", "zeppelin or quokka", ""]


def samples_run(studio: BenchStudio, samples: int) -> Any:
    """A finished run with `samples` GRPO-shaped samples (COPY), analyzed; the Run."""
    from django.db import connection

    from studio.runs.models import Run

    run = Run.objects.create(
        project=studio.project, name="bench", config={}, created_by=studio.user, status="succeeded"
    )
    started = time.perf_counter()
    n = copy_rows(
        "telemetry_rolloutsample", SAMPLE_COLUMNS, sample_rows(run.pk, samples, random.Random(0))
    )
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE telemetry_rolloutsample")
    print(f"[load] run {run.pk}: {n} samples in {time.perf_counter() - started:.1f} s; {load()}")
    return run


def long_group(run_id: int, step: int) -> int:
    """A group of 8 at `step` whose first sample has 2,000 tokens of token data."""
    from studio.telemetry.models import RolloutSample

    rng = random.Random(1)
    tokens = [
        rng.choice([" the", " answer", " is", "\n", " 42", ".", " so", " we"])
        for _ in range(LONG_TOKENS)
    ]
    token_data = {
        "token_ids": [rng.randrange(512) for _ in range(LONG_TOKENS)],
        "tokens": tokens,
        "logprobs": [-rng.expovariate(1.5) for _ in range(LONG_TOKENS)],
        "advantages": [0.8] * LONG_TOKENS,
        "entropy": [rng.uniform(0, 3) for _ in range(LONG_TOKENS)],
    }
    ids = []
    for position in range(8):
        sample = RolloutSample.objects.create(
            run_id=run_id, attempt=1, seq=10**7, position=position, step=step,
            group_id="long", data_source="gsm8k", prompt="Count to a big number.",
            response="".join(tokens) if position == 0 else "1 2 3",
            score=1.0 if position == 0 else 0.0, advantage=0.8 if position == 0 else -0.1,
            response_length=LONG_TOKENS if position == 0 else 3,
            finish_reason="length" if position == 0 else "stop",
            token_data=token_data if position == 0 else None,
        )  # fmt: skip
        ids.append(sample.pk)
    return ids[0]


def browser_context(playwright: Any, url: str) -> tuple[Any, Any]:
    from tests.browser.harness import CHROMIUM, CHROMIUM_ARGS, WIDE

    browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    context = browser.new_context(viewport=WIDE)
    context.set_default_timeout(60_000)
    request = context.request
    request.get(f"{url}/")
    token = next(c["value"] for c in context.cookies() if c["name"] == "csrftoken")
    answer = request.post(
        f"{url}/api/auth/login",
        data={"username": USERNAME, "password": PASSWORD},
        headers={"X-CSRFToken": token},
    )
    assert answer.status == 200, answer.text()
    return browser, context


def generation(page: Any) -> int:
    return int(page.get_by_test_id("list-status").get_attribute("data-generation") or 0)


def wait_for_new_list(page: Any, before: int) -> None:
    page.wait_for_function(
        """before => {
          const s = document.querySelector('[data-testid=list-status]');
          return s && Number(s.dataset.generation) > before && s.dataset.state === 'ready';
        }""",
        arg=before,
        polling="raf",
    )


def filter_changes(page: Any, first: int, count: int) -> list[tuple[str, float]]:
    """(a): time each filter change until the new list's first page is shown. `first`
    continues the cycle of changes, so no change repeats the filter already set."""
    actions = []
    for i in range(first, first + count):
        kind = i % 4
        if kind == 0:
            value = "1" if (i // 4) % 2 == 0 else ""
            actions.append(("score", lambda v=value: fill(page, "Score from", v)))
        elif kind == 1:
            key = "ArrowLeft" if (i // 4) % 2 == 0 else "End"
            actions.append(("steps", lambda k=key: press(page, "Last step", k)))
        elif kind == 2:
            query = SEARCHES[(i // 4) % len(SEARCHES)]
            actions.append(("search", lambda q=query: fill(page, "Search prompt and response", q)))
        else:
            choice = "learning" if (i // 4) % 2 == 0 else ""
            actions.append(
                ("signal", lambda c=choice: page.get_by_label("Groups").select_option(c))
            )
    times = []
    for kind_name, action in actions:
        before = generation(page)
        started = time.perf_counter()
        action()
        wait_for_new_list(page, before)
        times.append((kind_name, (time.perf_counter() - started) * 1000))
    return times


def fill(page: Any, label: str, value: str) -> None:
    box = page.get_by_label(label)
    box.fill(value if value else " ")  # a change the page commits on Enter
    if not value:
        box.fill("")
    box.press("Enter")


def press(page: Any, label: str, key: str) -> None:
    page.get_by_label(label).press(key)


SCROLL = """async (target) => {
  const list = document.querySelector('[data-testid=sample-list]');
  const frames = [];
  let last = performance.now();
  const started = last;
  while (true) {
    await new Promise(requestAnimationFrame);
    const now = performance.now();
    frames.push(now - last);
    last = now;
    const rows = Math.floor(list.scrollTop / 58);
    if (rows >= target || now - started > 120000) return { frames, rows, ms: now - started };
    list.scrollTop += 580;
  }
}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200_000)
    parser.add_argument("--changes", type=int, default=30, help="timed filter changes")
    parser.add_argument("--opens", type=int, default=10, help="timed group/token view opens")
    parser.add_argument("--scroll-rows", type=int, default=10_000)
    args = parser.parse_args()

    with throwaway_studio(BENCH_DB) as studio:
        from django.db import connection

        run = samples_run(studio, args.samples)
        last_step = (args.samples // 8 - 1) // 25
        long_id = long_group(run.pk, last_step)
        connection.close()
        with served(studio.database_url) as url:
            from playwright.sync_api import sync_playwright

            with sync_playwright() as playwright:
                browser, context = browser_context(playwright, url)
                page = context.new_page()
                explorer = f"{url}/p/{PROJECT}/runs/{run.pk}/rollouts"
                page.goto(explorer)
                page.wait_for_selector("[data-sample-id]")
                filter_changes(page, 0, 4)  # warm-up: caches, plotly, the connection
                print(f"[a] {load()}", flush=True)
                changes = filter_changes(page, 4, args.changes)
                print(f"[a] filter change -> first results: {summary([t for _, t in changes])}")
                for kind_name in dict.fromkeys(k for k, _ in changes):
                    mine = [t for k, t in changes if k == kind_name]
                    print(f"[a]   {kind_name}: {summary(mine)}")

                page.goto(explorer)
                page.wait_for_selector("[data-sample-id]")
                result = page.evaluate(SCROLL, args.scroll_rows)
                frames = sorted(result["frames"][1:])
                p95 = frames[round(0.95 * (len(frames) - 1))]
                print(
                    f"[b] scrolled {result['rows']} rows in {result['ms'] / 1000:.1f} s: "
                    f"{len(frames)} frames, median frame {frames[len(frames) // 2]:.1f} ms, "
                    f"p95 {p95:.1f} ms, max {frames[-1]:.1f} ms "
                    f"({1000 * len(frames) / result['ms']:.0f} fps); {load()}"
                )

                group_times, token_times = [], []
                for _ in range(args.opens):
                    page.goto(f"{explorer}?step={last_step}&sample={long_id}")
                    page.wait_for_selector(f"[data-sample-id='{long_id}']")
                    page.get_by_test_id("sample-list").focus()
                    started = time.perf_counter()
                    page.keyboard.press("Enter")
                    page.wait_for_selector("[data-testid=group-samples] article >> nth=7")
                    group_times.append((time.perf_counter() - started) * 1000)
                    link = page.locator(f"a[href$='/samples/{long_id}/tokens']")
                    started = time.perf_counter()
                    link.click()
                    page.wait_for_selector("[data-testid=token-strip] span >> nth=511")
                    page.wait_for_selector("[aria-label='logprobs by token position'] svg")
                    token_times.append((time.perf_counter() - started) * 1000)
                print(f"[c] {load()}")
                print(f"[c] group view (Enter -> 8 cards): {summary(group_times)}")
                print(f"[c] per-token view, {LONG_TOKENS} tokens: {summary(token_times)}")
                browser.close()


if __name__ == "__main__":
    main()

"""First screen of six pages of the web app in headless Chromium (issue #49).

Creates a throwaway database (``rlstudio_bench_screens`` on the server of DATABASE_URL)
holding one project with:

  - a run of 20,000 steps x 40 metric keys (800k points, COPY; bench/web_run_page.py's),
    and three more of the same size for the compare page (configs differing in lr);
  - a run with 200,000 GRPO-shaped rollout samples (COPY; bench/web_rollouts.py's);
  - `--runs` runs in all (500), the others finished runs of 50-2,000 steps whose reward
    and reward-error series (the two keys the runs list reads) are loaded by COPY;
  - 50 datasets of 5 versions each (stats computed from generated GSM8K-style prompts);
  - 100 models (hub models, ready, with their folder facts and a chat template).

It starts uvicorn on it (serving the built frontend/dist), and for each page loads it
once to warm the server (discarded), then `--repeats` times, each in a new browser context
(so an empty HTTP cache) signed in by cookie, 1440x900. A load is timed with the page's
clock: `performance.now()` (ms since navigation start) in the first animation frame in
which the page's ready condition holds (each is named in the output and defined in
SCREENS below: the page's primary content drawn, not counts or distributions loaded
after it). Prints median and p95 per page with the load average, then drops the database.

    (cd frontend && npm run build)
    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python bench/first_screens.py [--samples 200000] [--runs 500] \\
        [--repeats 5] [--pages run,explorer,runs,compare,datasets,models] [--waterfall]

Small while developing: `--steps 2000 --samples 2000 --runs 20`.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.api_queries import copy_rows, load, metric_rows, problem, prompt_of, summary
from bench.web_rollouts import samples_run
from bench.web_run_page import browser_context, insert_big_run, p95, session
from bench.web_studio import PASSWORD, PROJECT, USERNAME, BenchStudio, served, throwaway_studio

BENCH_DB = "rlstudio_bench_screens"
TARGET_MS = 1000
COMPARED = 4
METRIC_COLUMNS = ["run_id", "attempt", "seq", "step", "key", "value", "superseded"]

# --- What "first screen" means for each page ---------------------------------------------
# Each condition is a JS expression, polled once per animation frame from the moment the
# navigation commits; the load's time is performance.now() in the first frame it holds.

# Every chart slot that intersects the viewport shows a drawn chart (MetricChart sets
# data-ready once plotly has drawn its data); a grid below the fold counts once laid out.
CHARTS_IN_VIEW = """(() => {
  const slots = [...document.querySelectorAll('[data-chart-slot]')];
  const inView = slots.filter((s) => {
    const box = s.getBoundingClientRect();
    return box.top < innerHeight && box.bottom > 0;
  });
  return slots.length > 0 && inView.every((s) => s.querySelector('figure[data-ready="true"]'));
})()"""


def table_filled(label: str, size: str) -> Callable[[dict[str, int]], str]:
    """The table's rows are drawn and fill the viewport (or it holds all `size` rows). A
    table renders its rows in one commit, so this is the first screenful of rows; "fill"
    keeps a page that shows fewer rows than fit from passing on its first few."""
    return lambda sizes: (
        f"""(() => {{
  const rows = document.querySelectorAll('table[aria-label="{label}"] tbody tr');
  return rows.length > 0 && (rows.length >= {sizes[size]}
    || rows[rows.length - 1].getBoundingClientRect().bottom >= innerHeight);
}})()"""
    )


def fixed(condition: str) -> Callable[[dict[str, int]], str]:
    return lambda sizes: condition


@dataclass(frozen=True)
class Screen:
    name: str
    what: str  # the page and its data, for the output
    ready: str  # the ready condition, in words
    condition: Callable[[dict[str, int]], str]  # ... as a JS expression, for the data sizes


SCREENS = {
    "run": Screen(
        "run",
        "run page, {steps:,} steps x 40 keys",
        "every chart in view drawn",
        fixed(CHARTS_IN_VIEW),
    ),
    "explorer": Screen(
        "explorer",
        "rollout explorer, {samples:,} samples",
        "first page of samples listed",
        # The list's status says its first page arrived, and its rows are drawn. The
        # distributions below the list load after it and do not count.
        fixed(
            """(() => document.querySelector('[data-testid=list-status][data-state=ready]') !== null
              && document.querySelector('[data-sample-id]') !== null)()"""
        ),
    ),
    "runs": Screen(
        "runs",
        "runs list, {runs:,} runs",
        "table rows fill the screen",
        table_filled("Runs", "runs"),
    ),
    "compare": Screen(
        "compare",
        f"compare of {COMPARED} runs of {{steps:,}} steps x 40 keys",
        "inputs and config diff shown, every chart in view drawn",
        # The inputs table, the config diff (computed after the runs arrive: no loading
        # line left) and the curves, as far as they are in view.
        fixed(
            """(() => document.querySelector('table[aria-label="Run inputs"] tbody tr') !== null
              && document.querySelector('[aria-label="Loading the config diff"]') === null
              && """
            + CHARTS_IN_VIEW
            + ")()"
        ),
    ),
    "datasets": Screen(
        "datasets",
        "datasets page, {datasets} datasets x {versions} versions",
        "table rows fill the screen",
        table_filled("Datasets", "datasets"),
    ),
    "models": Screen(
        "models",
        "models page, {models} models",
        "table rows fill the screen",
        table_filled("Models", "models"),
    ),
}


# --- Data --------------------------------------------------------------------------------


def run_config(lr: float) -> dict[str, Any]:
    """A real stored config (the demo preset, validated), as a run of the studio keeps it."""
    from trainer.config import build_config, compose_tree

    tree = compose_tree(preset="grpo-tiny-arith", overrides=[f"actor.optim.lr={lr}"])
    return build_config(tree).model_dump(mode="json")


def big_runs(studio: BenchStudio, count: int, steps: int) -> list[int]:
    """`count` finished runs of `steps` x 40 keys, newest first in the list."""
    from studio.runs.models import Run

    ids = []
    for i in range(count):
        run_id = insert_big_run(studio.project.slug, studio.user.username, steps)
        lr = 1e-6 * (i + 1)
        Run.objects.filter(pk=run_id).update(
            name=f"grpo-{steps}-steps-lr-{lr:g}", config=run_config(lr), preset="grpo-tiny-arith"
        )
        ids.append(run_id)
    return ids


def list_runs(studio: BenchStudio, count: int, rng: random.Random) -> None:
    """`count` older finished runs with their reward and reward-error series (the runs
    list's sparkline and error badge read these two keys)."""
    from studio.runs.models import Run, RunStatus
    from studio.telemetry.series.reward_errors import ERROR_RATE_KEY
    from studio.telemetry.series.sparklines import SPARKLINE_KEY

    if count <= 0:
        return
    configs = [run_config(lr) for lr in (1e-6, 3e-6, 1e-5)]
    now = datetime.now(UTC)
    runs = []
    for i in range(count):
        started = now - timedelta(days=30) + timedelta(minutes=80 * i)
        runs.append(
            Run(
                project=studio.project,
                name=f"gsm8k-grpo-{i:03d}",
                config=configs[i % len(configs)],
                preset="grpo-tiny-arith",
                status=rng.choice(
                    [RunStatus.SUCCEEDED] * 6 + [RunStatus.FAILED, RunStatus.CANCELLED]
                ),
                tags=rng.sample(
                    ["baseline", "lr-sweep", "kl", "long-context", "qwen"], rng.randint(0, 2)
                ),
                created_by=studio.user,
                created_at=started - timedelta(minutes=2),
                started_at=started,
                finished_at=started + timedelta(minutes=rng.randint(10, 600)),
            )
        )
    created = Run.objects.bulk_create(runs)
    began = time.perf_counter()
    rows = (
        row
        for run in created
        for row in metric_rows(run.pk, rng.randint(50, 2000), rng, [SPARKLINE_KEY, ERROR_RATE_KEY])
    )
    n = copy_rows("telemetry_metricpoint", METRIC_COLUMNS, rows)
    print(f"[load] {count} runs, {n} points in {time.perf_counter() - began:.1f} s; {load()}")


def datasets(studio: BenchStudio, count: int, versions: int, rng: random.Random) -> None:
    from studio.datasets.models import DatasetVersion
    from studio.datasets.services import create_dataset
    from studio.datasets.stats import dataset_stats
    from trainer.data.formats import PromptRecord

    for d in range(count):
        dataset = create_dataset(
            studio.project,
            f"gsm8k-variant-{d:02d}",
            "Grade-school maths, rewritten prompts.",
            studio.user,
        )
        for number in range(1, versions + 1):
            records = []
            for i in range(200):
                p = problem(rng)
                records.append(
                    PromptRecord(
                        index=i,
                        data_source=rng.choice(("gsm8k", "math")),
                        messages=[{"role": "user", "content": prompt_of(p)}],
                        ground_truth=str(p["total"]),
                        extra_info={"split": rng.choice(("train", "train", "test"))},
                    )
                )
            DatasetVersion.objects.create(
                dataset=dataset,
                number=number,
                file=f"datasets/p{studio.project.pk}/d{dataset.pk}/v{number}.parquet",
                source_format="jsonl",
                data_format="verl",
                column_mapping={"prompt_key": "prompt", "answer_key": "answer", "data_source": ""},
                size_bytes=rng.randint(1_000_000, 50_000_000),
                checksum=f"{rng.getrandbits(256):064x}",
                row_count=rng.randint(1000, 20000),
                columns=[
                    {"name": "data_source", "type": "string"},
                    {"name": "prompt", "type": "list<item: struct<role: string, content: string>>"},
                    {"name": "reward_model", "type": "struct<ground_truth: string, style: string>"},
                    {"name": "extra_info", "type": "struct<index: int64, split: string>"},
                ],
                stats={
                    **dataset_stats(records),
                    "upload": {
                        "filename": f"gsm8k-v{number}.jsonl",
                        "size_bytes": rng.randint(1_000_000, 90_000_000),
                        "sha256": f"{rng.getrandbits(256):064x}",
                    },
                },
                message=f"v{number}: dedup and reformat",
                created_by=studio.user,
            )


# Qwen2.5-Instruct's template is ~2.5 KB; every model of the list carries one this size.
CHAT_TEMPLATE = (
    "{%- for message in messages %}{{- '<|im_start|>' + message.role + '\\n' + message.content"
    " + '<|im_end|>' + '\\n' }}{%- endfor %}{%- if add_generation_prompt %}"
    "{{- '<|im_start|>assistant\\n' }}{%- endif %}"
) * 12


def models(studio: BenchStudio, count: int, rng: random.Random) -> None:
    from studio.model_registry.inspect import ModelInfo
    from studio.model_registry.models import ModelKind, ModelRole, RegisteredModel

    sizes = {"0.5B": 494_032_768, "1.5B": 1_543_714_304, "3B": 3_085_938_688, "7B": 7_615_616_512}
    found = []
    for i in range(count):
        size = rng.choice(list(sizes))
        reward = i % 5 == 4
        info = ModelInfo(
            architecture="Qwen2ForSequenceClassification" if reward else "Qwen2ForCausalLM",
            model_type="qwen2",
            parameters=sizes[size],
            tokenizer="Qwen2TokenizerFast",
            chat_template=CHAT_TEMPLATE,
            reward_model=reward,
            vocabulary=f"{rng.getrandbits(64):016x}",
        )
        found.append(
            RegisteredModel(
                project=studio.project,
                name=f"qwen2.5-{size.lower()}-{'rm' if reward else 'sft'}-{i:03d}",
                kind=ModelKind.HUB,
                role=ModelRole.REWARD if reward else ModelRole.POLICY,
                hub_id=f"Qwen/Qwen2.5-{size}-Instruct",
                revision="main",
                info=info.as_json(),
                created_by=studio.user,
            )
        )
    RegisteredModel.objects.bulk_create(found)


# --- Loads -------------------------------------------------------------------------------


def first_screen(
    browser: Any, s: Any, url: str, page_url: str, condition: str
) -> tuple[float, Any]:
    """One load in a new context: ms from navigation start to the ready frame, and the
    page's resource timings up to then (for --waterfall)."""
    context = browser_context(browser, s, url)
    context.set_default_timeout(60_000)
    page = context.new_page()
    page.goto(page_url, wait_until="commit")
    ready = page.wait_for_function(
        f"() => ({condition}) ? performance.now() : false", polling="raf", timeout=60_000
    )
    ms = float(ready.json_value())
    resources = page.evaluate(
        """(until) => performance.getEntriesByType('resource')
          .filter((e) => e.startTime <= until)
          .map((e) => [e.name, e.startTime, e.responseStart, e.responseEnd, e.encodedBodySize])""",
        ms,
    )
    context.close()
    return ms, resources


def print_waterfall(origin: str, resources: list[list[Any]], ms: float) -> None:
    print(
        f"      {'start':>6} {'first byte':>10} {'end':>6} {'KB':>7}  request (ready at {ms:.0f})"
    )
    for name, start, first_byte, end, size in sorted(resources, key=lambda r: r[1]):
        path = name.removeprefix(origin)
        print(f"      {start:6.0f} {first_byte:10.0f} {end:6.0f} {size / 1024:7.1f}  {path[:110]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000, help="steps of the run page's run")
    parser.add_argument("--samples", type=int, default=200_000, help="samples in the explorer")
    parser.add_argument("--runs", type=int, default=500, help="runs in the runs list")
    parser.add_argument("--datasets", type=int, default=50)
    parser.add_argument("--versions", type=int, default=5, help="versions per dataset")
    parser.add_argument("--models", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5, help="timed loads per page")
    parser.add_argument("--pages", default=",".join(SCREENS), help="a comma-separated subset")
    parser.add_argument("--waterfall", action="store_true", help="print each page's requests")
    args = parser.parse_args()
    pages = [p for p in args.pages.split(",") if p]
    unknown = sorted(set(pages) - set(SCREENS))
    if unknown:
        parser.error(f"--pages: unknown {unknown}; choose from {','.join(SCREENS)}")

    from tests.browser.harness import CHROMIUM, CHROMIUM_ARGS

    rng = random.Random(0)
    with throwaway_studio(BENCH_DB) as studio:
        from django.db import connection

        paths: dict[str, str] = {}
        base = f"/p/{PROJECT}"
        made = 0  # runs made for other pages: the runs list shows them too
        if "explorer" in pages:
            explorer_run = samples_run(studio, args.samples)
            paths["explorer"] = f"{base}/runs/{explorer_run.pk}/rollouts"
            made += 1
        big = COMPARED if "compare" in pages else 1 if "run" in pages else 0
        if "runs" in pages:  # older than the big runs, so those head the list
            list_runs(studio, args.runs - made - big, rng)
        if big:
            ids = big_runs(studio, big, args.steps)
            paths["run"] = f"{base}/runs/{ids[0]}"
            paths["compare"] = f"{base}/compare?runs={','.join(map(str, ids))}"
        paths["runs"] = f"{base}/runs"
        if "datasets" in pages:
            datasets(studio, args.datasets, args.versions, rng)
        paths["datasets"] = f"{base}/datasets"
        if "models" in pages:
            models(studio, args.models, rng)
        paths["models"] = f"{base}/models"
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
        connection.close()
        print(f"[load] done; {load()}", flush=True)

        sizes = {
            "steps": args.steps,
            "samples": args.samples,
            "runs": studio.project.runs.count(),
            "datasets": args.datasets,
            "versions": args.versions,
            "models": args.models,
        }
        results = []
        with served(studio.database_url) as url:
            from playwright.sync_api import sync_playwright

            s = session(url, USERNAME, PASSWORD)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
                )
                for name in pages:
                    screen = SCREENS[name]
                    page_url = url + paths[name]
                    condition = screen.condition(sizes)
                    first_screen(browser, s, url, page_url, condition)  # warms the server
                    times: list[float] = []
                    resources: list[list[Any]] = []
                    for _ in range(args.repeats):
                        ms, resources = first_screen(browser, s, url, page_url, condition)
                        times.append(ms)
                    what = screen.what.format(**sizes)
                    print(
                        f"[{name}] {what} -> {screen.ready}: {summary(times)}; {load()}", flush=True
                    )
                    if args.waterfall:
                        print_waterfall(url, resources, times[-1])
                    results.append((what, screen.ready, times))
                browser.close()

    print(f"\n| page | first screen = | median | p95 | median < {TARGET_MS} ms |")
    print("|---|---|---|---|---|")
    for what, ready, times in results:
        median = statistics.median(times)
        verdict = "met" if median < TARGET_MS else "not met"
        print(f"| {what} | {ready} | {median:.0f} ms | {p95(times):.0f} ms | {verdict} |")


if __name__ == "__main__":
    main()

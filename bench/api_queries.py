"""Studio API query latency on Postgres: downsampled metrics and sample text search.

Creates a throwaway database (``rlstudio_bench`` on the server of DATABASE_URL),
migrates it, loads one run with 20k steps x 40 metric keys (800k points) and 200k
rollout samples with GSM8K-style prompts and reasoning responses (both with COPY; the
search trigger fills each sample's tsvector), then times the real API views through
Django's test client with a personal API token:

  (a) GET /api/metrics/query for all 40 keys at 1000 points each (and, for the split,
      the SQL + assembly alone);
  (b) GET /api/samples/?run=&q= for 30 varied full-text queries (common, rare, phrases,
      or, negation), a warm-up round then timed rounds;
  (c) GET /api/runs/{id}/report, the shareable HTML report (24 charts, samples).

Prints median and p95 with the load average, then drops the database.

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python bench/api_queries.py [--samples 200000] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg
from psycopg import sql

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

BENCH_DB = "rlstudio_bench"

# fmt: off
NAMES = [
    "Ava", "Ben", "Chloe", "Dan", "Emma", "Finn", "Grace", "Hugo", "Isla", "Jack", "Kai",
    "Lena", "Mia", "Noah", "Omar", "Priya", "Quinn", "Ravi", "Sara", "Tom", "Uma", "Vik",
    "Wen", "Yara", "Zoe",
]
ITEMS = [
    "apples", "pencils", "marbles", "cookies", "stickers", "books", "cupcakes", "oranges",
    "tickets", "shells", "coins", "balloons", "crayons", "muffins", "bottles", "candles",
    "flowers", "beads", "pebbles", "bagels", "lemons", "notebooks", "seashells", "postcards",
    "kites", "pretzels", "tomatoes", "peaches", "donuts", "stamps",
]
PLACES = [
    "bakery", "market", "library", "school", "garden", "museum", "farm", "store", "park",
    "harbor",
]
# fmt: on
FILLERS = [
    "Let me double-check the arithmetic.",
    "Wait, I should re-read the question.",
    "Hmm, that does not look right, let me redo this step.",
    "So far this seems consistent with the problem statement.",
    "I need to be careful with the units here.",
    "Let's verify by working backwards from the result.",
    "This is a two-step problem, so I will handle each part separately.",
    "Note that the question asks for the total, not the difference.",
    "Alternatively, we could set up an equation.",
    "Rounding is not needed because all quantities are whole numbers.",
]
RARE = ["zeppelin", "quokka", "marzipan", "sextant", "bioluminescent", "tessellation"]

METRIC_KEYS = [
    f"{group}/{name}"
    for group, names in {
        "actor": ["pg_loss", "entropy", "ppo_kl", "pg_clipfrac", "grad_norm", "lr", "kl_loss"],
        "critic": [
            "score/mean",
            "score/max",
            "score/min",
            "rewards/mean",
            "advantages/mean",
            "advantages/max",
            "returns/mean",
        ],
        "response_length": ["mean", "max", "min", "clip_ratio"],
        "prompt_length": ["mean", "max", "min"],
        "timing_s": ["gen", "ref", "old_log_prob", "update_actor", "step", "reward"],
        "perf": ["throughput", "mfu", "max_memory_allocated_gb", "tokens_per_s"],
        "val": [
            "score/gsm8k",
            "score/math",
            "acc/gsm8k",
            "acc/math",
            "reward_std",
            "group_zero_std",
            "format_ok",
        ],
        "reward": ["format", "correctness", "length"],
    }.items()
    for name in names
][:40]

QUERIES = [
    "answer",
    "total",
    "apples",
    "marbles and cookies",
    '"the answer is"',
    "bakery",
    "museum tickets",
    "zeppelin",
    "quokka OR marzipan",
    "sextant",
    "Priya",
    "Hugo seashells",
    "double-check arithmetic",
    '"work backwards"',
    "equation -apples",
    "units careful",
    "difference",
    "pretzels market",
    "42",
    "bioluminescent",
    "tessellation OR zeppelin",
    "kites park",
    "lemons -lemon",
    '"re-read the question"',
    "boxed",
    "Zoe bought",
    "donuts stamps",
    "harbor shells",
    "candles OR balloons",
    "whole numbers rounding",
]


def database_urls(name: str = BENCH_DB) -> tuple[str, str]:
    """(the server's URL as given, the same server's throwaway bench database `name`)."""
    admin = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    return admin, urlsplit(admin)._replace(path=f"/{name}").geturl()


def recreate(admin: str, drop_only: bool = False, name: str = BENCH_DB) -> None:
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )
        if not drop_only:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def metric_rows(
    run_id: int, steps: int, rng: random.Random, keys: list[str] = METRIC_KEYS
) -> Iterator[tuple[Any, ...]]:
    """A drifting random walk per key with a rare spike (what downsampling must keep)."""
    for key in keys:
        level, drift = rng.uniform(-1, 1), rng.uniform(-1e-4, 1e-4)
        for step in range(steps):
            level += drift + rng.gauss(0, 0.01)
            value = level + (rng.choice((-1, 1)) * 25 if rng.random() < 1e-3 else 0.0)
            yield (run_id, 1, step, step, key, value, False)


def problem(rng: random.Random) -> dict[str, Any]:
    name, other = rng.sample(NAMES, 2)
    item, item2 = rng.sample(ITEMS, 2)
    a, b, c = rng.randint(2, 60), rng.randint(2, 40), rng.randint(2, 9)
    return {
        "name": name,
        "other": other,
        "item": item,
        "item2": item2,
        "place": rng.choice(PLACES),
        "a": a,
        "b": b,
        "c": c,
        "total": (a + b) * c,
    }


def prompt_of(p: dict[str, Any]) -> str:
    return (
        f"{p['name']} goes to the {p['place']} and buys {p['a']} {p['item']}. {p['other']} "
        f"gives {p['name']} {p['b']} more {p['item']}. The {p['place']} then trades {p['c']} "
        f"{p['item2']} for each of the {p['item']}. How many {p['item2']} does {p['name']} "
        "get in total? Show your reasoning and put the final answer in \\boxed{}."
    )


def response_of(p: dict[str, Any], rng: random.Random) -> str:
    a, b, c = p["a"], p["b"], p["c"]
    steps = [
        f"{p['name']} starts with {a} {p['item']} from the {p['place']}.",
        f"After {p['other']} adds {b}, {p['name']} has {a} + {b} = {a + b} {p['item']}.",
        f"Each one is traded for {c} {p['item2']}, so {a + b} * {c} = {p['total']}.",
        f"Check: {p['total']} / {c} = {a + b}, and {a + b} - {b} = {a}, which matches.",
    ]
    for _ in range(rng.randint(2, 7)):
        steps.insert(rng.randint(0, len(steps)), rng.choice(FILLERS))
    if rng.random() < 0.02:
        steps.insert(1, f"This reminds me of a {rng.choice(RARE)}, but that is irrelevant.")
    answer = p["total"] if rng.random() < 0.6 else p["total"] + rng.choice((-c, c, 1, -1))
    return " ".join(steps) + f" So the answer is \\boxed{{{answer}}}."


def sample_rows(run_id: int, count: int, rng: random.Random) -> Iterator[tuple[Any, ...]]:
    """GRPO-shaped: 25 groups of 8 responses to one prompt per step."""
    group_size, groups_per_step = 8, 25
    now = datetime.now(UTC)
    for seq in range(count // group_size):
        step, group = divmod(seq, groups_per_step)
        p = problem(rng)
        prompt, truth = prompt_of(p), str(p["total"])
        for position in range(group_size):
            response = response_of(p, rng)
            score = float(response.endswith(f"\\boxed{{{truth}}}."))
            error = "TimeoutError: reward exceeded 5s" if rng.random() < 0.005 else ""
            yield (
                run_id,
                1,
                seq,
                position,
                step,
                "train",
                f"s{step}-g{group}",
                rng.choice(("gsm8k", "math")),
                prompt,
                response,
                truth,
                score,
                "{}",
                score - 0.5,
                len(prompt) // 4,
                len(response) // 4,
                "stop",
                error,
                False,
                now,
            )


def copy_rows(table: str, columns: list[str], rows: Iterator[tuple]) -> int:
    from django.db import connection

    statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
        sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, columns))
    )
    n = 0
    with connection.cursor() as cursor, cursor.cursor.copy(statement) as copy:
        for row in rows:
            copy.write_row(row)
            n += 1
    return n


def timed(fn: Callable[[], object], repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return times


def summary(times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (
        f"median {statistics.median(ordered):.0f} ms, p95 {p95:.0f} ms, "
        f"min {ordered[0]:.0f} ms, max {ordered[-1]:.0f} ms (n={len(ordered)})"
    )


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--samples", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=15, help="timed metric queries")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds of the 30 queries")
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    args = parser.parse_args()

    admin, bench_url = database_urls()
    recreate(admin)
    os.environ["DATABASE_URL"] = bench_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studio.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    from studio.projects.models import ApiToken, Membership, Project, Role
    from studio.runs.models import Run
    from studio.telemetry.series import StepRange, downsample

    try:
        print(f"[setup] {load()}", flush=True)
        call_command("migrate", verbosity=0)
        from django.contrib.auth.models import User

        user = User.objects.create_user("bench", password="a-long-password-123")
        project = Project.objects.create(name="Bench", slug="bench", created_by=user)
        Membership.objects.create(project=project, user=user, role=Role.MEMBER)
        run = Run.objects.create(project=project, name="bench", config={}, created_by=user)
        _, token = ApiToken.issue(user, "bench")
        rng = random.Random(0)

        started = time.perf_counter()
        n = copy_rows(
            "telemetry_metricpoint",
            ["run_id", "attempt", "seq", "step", "key", "value", "superseded"],
            metric_rows(run.pk, args.steps, rng),
        )
        print(f"[load] {n} metric points in {time.perf_counter() - started:.1f} s", flush=True)
        with connection.cursor() as cursor:  # the ingest ledger: one metrics record a step
            cursor.execute(
                "INSERT INTO telemetry_ingestedrecord "
                "(run_id, attempt, seq, kind, step, emitted_at, received_at, superseded) "
                "SELECT %s, 1, s, 'metrics', s, 1.7e9 + s * 2.5, now(), false "
                "FROM generate_series(0, %s - 1) AS s",
                [run.pk, args.steps],
            )
        started = time.perf_counter()
        n = copy_rows(
            "telemetry_rolloutsample",
            [
                "run_id",
                "attempt",
                "seq",
                "position",
                "step",
                "split",
                "group_id",
                "data_source",
                "prompt",
                "response",
                "ground_truth",
                "score",
                "components",
                "advantage",
                "prompt_length",
                "response_length",
                "finish_reason",
                "error",
                "superseded",
                "created_at",
            ],
            sample_rows(run.pk, args.samples, rng),
        )
        print(f"[load] {n} samples in {time.perf_counter() - started:.1f} s", flush=True)
        started = time.perf_counter()
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE telemetry_metricpoint")
            cursor.execute("VACUUM ANALYZE telemetry_rolloutsample")
            cursor.execute(
                "SELECT pg_size_pretty(pg_total_relation_size('telemetry_rolloutsample'))"
            )
            size = cursor.fetchone()[0]
        print(f"[load] vacuum analyze {time.perf_counter() - started:.1f} s; samples {size}")

        client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
        keys = ",".join(METRIC_KEYS)

        def metrics_query() -> None:
            response = client.get(
                "/api/metrics/query", {"runs": run.pk, "keys": keys, "points": 1000}
            )
            assert response.status_code == 200, response.content[:300]
            body = json.loads(response.content)
            assert len(body["series"]) == len(METRIC_KEYS)
            assert all(len(s["steps"]) <= 1000 for s in body["series"])

        def sql_only() -> None:
            downsample([run.pk], METRIC_KEYS, 1000, StepRange())

        def with_times() -> None:
            response = client.get(
                "/api/metrics/query", {"runs": run.pk, "keys": keys, "points": 1000, "times": 1}
            )
            assert response.status_code == 200, response.content[:300]
            assert all(None not in s["times"] for s in json.loads(response.content)["series"])

        timed(metrics_query, 2)  # warm the cache and the connection
        print(f"[a] {load()}", flush=True)
        api: list[float] = []
        db: list[float] = []
        timed_api: list[float] = []
        for _ in range(3):  # alternate so background load hits all alike
            api += timed(metrics_query, max(1, args.repeats // 3))
            db += timed(sql_only, max(1, args.repeats // 3))
            timed_api += timed(with_times, max(1, args.repeats // 3))
        print(f"[a] /api/metrics/query 40 keys x 1000 points: {summary(api)}")
        print(f"[a]   SQL + assembly alone (no HTTP/JSON): {summary(db)}")
        print(f"[a]   the same with times=true: {summary(timed_api)}", flush=True)

        full_pages = 0

        def search(q: str) -> Callable[[], None]:
            def go() -> None:
                nonlocal full_pages
                response = client.get("/api/samples/", {"run": run.pk, "q": q})
                assert response.status_code == 200, response.content[:300]
                full_pages += len(json.loads(response.content)["results"]) == 50

            return go

        for q in QUERIES:  # warm-up round, not counted
            search(q)()
        print(f"[b] {load()}", flush=True)
        full_pages = 0
        times = []
        for _ in range(args.rounds):
            for q in QUERIES:
                times += timed(search(q), 1)
        print(
            f"[b] /api/samples/?q= over {args.samples} samples, {len(QUERIES)} queries x "
            f"{args.rounds}: {summary(times)}; {full_pages // args.rounds} of "
            f"{len(QUERIES)} queries fill a 50-sample page"
        )
        page = timed(lambda: client.get("/api/samples/", {"run": run.pk}), 10)
        print(f"[b]   first page without a query: {summary(page)}")

        report_bytes = 0

        def report() -> None:
            nonlocal report_bytes
            response = client.get(f"/api/runs/{run.pk}/report", HTTP_ACCEPT="text/html")
            assert response.status_code == 200, response.content[:300]
            report_bytes = len(response.content)

        print(f"[c] {load()}", flush=True)
        reports = timed(report, 3)
        print(f"[c] /api/runs/{{id}}/report ({report_bytes / 1e6:.1f} MB): {summary(reports)}")
        print(f"[end] {load()}", flush=True)
    finally:
        from django.db import connections

        connections.close_all()
        if not args.keep:
            recreate(admin, drop_only=True)


if __name__ == "__main__":
    main()

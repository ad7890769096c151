"""The explorer's score histogram on 200,000 samples, with and without its covering index.

Creates a throwaway database (``rlstudio_bench_hist`` on the server of DATABASE_URL),
migrates it, loads one run's samples by COPY (bench/api_queries.py's generator), runs
VACUUM ANALYZE (what autovacuum does after a bulk insert), then times
`studio.telemetry.samples.queries.score_histogram` over step ranges of every size, in
rounds that alternate the index `sample_live_step_score` dropped and present, so both
sides see the same machine. Prints median and p95 per side, the ratio, and each side's
plan, then drops the database.

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python bench/histogram_index.py [--samples 200000] [--rounds 6]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.api_queries import copy_rows, database_urls, load, recreate, sample_rows, summary
from bench.web_rollouts import SAMPLE_COLUMNS

BENCH_DB = "rlstudio_bench_hist"
INDEX = "sample_live_step_score"
BINS = 30


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=6, help="rounds per side, alternating")
    args = parser.parse_args()

    admin, bench_url = database_urls(BENCH_DB)
    recreate(admin, name=BENCH_DB)
    os.environ["DATABASE_URL"] = bench_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studio.settings")
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection

    from studio.projects.models import Project
    from studio.runs.models import Run
    from studio.telemetry.samples.queries import score_histogram
    from studio.telemetry.series import StepRange

    try:
        call_command("migrate", verbosity=0)
        user = User.objects.create_user("bench", password="a-long-password-123")
        project = Project.objects.create(name="Bench", slug="bench", created_by=user)
        run = Run.objects.create(project=project, name="bench", config={}, created_by=user)
        rng = random.Random(0)
        started = time.perf_counter()
        n = copy_rows(
            "telemetry_rolloutsample", SAMPLE_COLUMNS, sample_rows(run.pk, args.samples, rng)
        )
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE telemetry_rolloutsample")
            cursor.execute("SELECT max(step) FROM telemetry_rolloutsample")
            last_step = cursor.fetchone()[0]
            cursor.execute(
                f"SELECT pg_indexes_size('telemetry_rolloutsample'), pg_relation_size('{INDEX}')"
            )
            all_indexes, this_index = cursor.fetchone()
        print(
            f"[load] {n} samples, steps 0-{last_step}, {time.perf_counter() - started:.1f} s; "
            f"index {this_index / 2**20:.1f} MiB of {all_indexes / 2**20:.1f} MiB; {load()}",
            flush=True,
        )
        # What the step slider asks for: the whole run, halves, tenths and narrow windows.
        ranges = [StepRange(0, last_step)]
        for width in (last_step // 2, last_step // 10, max(1, last_step // 100)):
            for _ in range(3):
                first = rng.randint(0, last_step - width)
                ranges.append(StepRange(first, first + width))

        definition = ""
        with connection.cursor() as cursor:
            cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", [INDEX])
            definition = cursor.fetchone()[0]

        def set_index(present: bool) -> None:
            with connection.cursor() as cursor:
                cursor.execute(f"DROP INDEX IF EXISTS {INDEX}")
                if present:
                    cursor.execute(definition)
                    cursor.execute("VACUUM ANALYZE telemetry_rolloutsample")

        def plan(present: bool) -> str:
            set_index(present)
            with connection.cursor() as cursor:
                cursor.execute(
                    "EXPLAIN SELECT min(score), max(score) FROM telemetry_rolloutsample "
                    "WHERE run_id = %s AND NOT superseded AND step BETWEEN %s AND %s "
                    "AND score > '-Infinity' AND score < 'Infinity'",
                    [run.pk, 0, last_step],
                )
                return " | ".join(row[0].strip() for row in cursor.fetchall()[:3])

        times: dict[bool, list[float]] = {False: [], True: []}
        for round_ in range(args.rounds):
            for present in (False, True) if round_ % 2 == 0 else (True, False):
                set_index(present)
                score_histogram(run.pk, ranges[0], BINS)  # warm the cache for this side
                for steps in ranges:
                    started = time.perf_counter()
                    score_histogram(run.pk, steps, BINS)
                    times[present].append((time.perf_counter() - started) * 1000)
        without, with_ = times[False], times[True]
        print(f"[histogram] {len(ranges)} step ranges x {args.rounds} rounds per side; {load()}")
        print(f"  without {INDEX}: {summary(without)}")
        print(f"  with it:    {summary(with_)}")
        print(
            f"  median ratio {statistics.median(without) / statistics.median(with_):.2f}x, "
            f"full-range median {statistics.median(without[0 :: len(ranges)]):.0f} -> "
            f"{statistics.median(with_[0 :: len(ranges)]):.0f} ms"
        )
        print(f"  plan without: {plan(False)}")
        print(f"  plan with:    {plan(True)}")
    finally:
        connection.close()
        recreate(admin, drop_only=True, name=BENCH_DB)


if __name__ == "__main__":
    main()

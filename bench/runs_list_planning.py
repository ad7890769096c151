"""The runs and evaluations lists with and without planning their joins as written
(studio.core.planner), side by side in one process: the permission matrix's seed plus
`EXTRA_RUNS` copies of its run, each list fetched `ROUNDS` times per setting, the two
interleaved so the machine's load falls on both. Prints the median request time of each
and the page query's planning and execution times by `EXPLAIN ANALYZE`.

    .venv/bin/python -m pytest -q -s -p no:cacheprovider bench/runs_list_planning.py

(pytest for the test database and the seed; DATABASE_URL and REDIS_URL as for the tests.)
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from django.db import connection
from rest_framework.test import APIClient

from studio.api.evaluations.evaluations import EvaluationViewSet
from studio.api.runs.runs import RunViewSet
from studio.runs.models import Run
from tests.studio.test_permission_matrix import Seed, fresh_throttles, seed

__all__ = ["fresh_throttles", "seed"]

EXTRA_RUNS = 300
ROUNDS = 60
LISTS = {
    "/api/runs/?project=alpha": RunViewSet,
    "/api/evaluations/?project=alpha": EvaluationViewSet,
}


def page_query(client: APIClient, path: str) -> tuple[str, Any]:
    statements: list[tuple[str, Any]] = []

    def record(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        statements.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        client.get(path)
    return next(s for s in statements if s[0].startswith('SELECT "runs_run"."id"'))


def explained_ms(query: tuple[str, Any], limit: int) -> str:
    """Median planning and execution time of `query` in 5 `EXPLAIN ANALYZE`s."""
    sql, params = query
    times: dict[str, list[float]] = {"Planning": [], "Execution": []}
    with connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL join_collapse_limit = {limit}")
        for _ in range(5):
            cursor.execute("EXPLAIN (ANALYZE, SUMMARY, TIMING OFF) " + sql, params)
            for (line,) in cursor.fetchall():
                if line.split()[0] in times:
                    times[line.split()[0]].append(float(line.split()[2]))
        cursor.execute("RESET join_collapse_limit")
    planning, execution = (statistics.median(t) for t in times.values())
    return f"planned in {planning:.2f} ms, ran in {execution:.2f} ms"


def test_lists_with_and_without_joins_as_written(seed: Seed, db: None) -> None:
    base = Run.objects.get(pk=seed.alpha.run)
    copies = []
    for i in range(EXTRA_RUNS):
        base.pk = None
        base.name = f"copy {i}"
        copies.append(
            Run(**{f.attname: getattr(base, f.attname) for f in Run._meta.concrete_fields})
        )
    Run.objects.bulk_create(copies)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {seed.tokens['member']}")
    for path, view in LISTS.items():
        seconds: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(ROUNDS):
            for written in (False, True):
                view.list_joins_as_written = written
                started = time.perf_counter()
                assert client.get(path).status_code == 200
                seconds[written].append(time.perf_counter() - started)
        view.list_joins_as_written = True
        sql = page_query(client, path)
        before, after = (statistics.median(seconds[w]) * 1000 for w in (False, True))
        print(
            f"\n{path}: request median {before:.1f} ms -> {after:.1f} ms ({after / before:.2f}x); "
            f"page query {explained_ms(sql, 8)} -> {explained_ms(sql, 1)}"
        )

"""The runs and evaluations lists plan their joins in the order written, and leave the
planner's settings as they found them (studio.core.planner)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction
from rest_framework.test import APIClient

from studio.core.planner import joins_as_written
from tests.studio.test_permission_matrix import Seed, fresh_throttles, seed

__all__ = ["fresh_throttles", "seed"]  # fixtures used here, defined with the matrix

SET_TO_ONE = "set_config('join_collapse_limit', '1', true)"


def join_collapse_limit() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW join_collapse_limit")
        return str(cursor.fetchone()[0])


def test_a_block_plans_joins_as_written_and_puts_the_setting_back(db: None) -> None:
    before = join_collapse_limit()
    assert before != "1"
    with joins_as_written():
        assert join_collapse_limit() == "1"
    assert join_collapse_limit() == before
    # An error inside rolls the block's savepoint back, and the setting with it; the
    # outer transaction (the test's) goes on.
    with pytest.raises(DatabaseError), joins_as_written(), connection.cursor() as cursor:
        cursor.execute("SELECT 1 / 0")
    assert join_collapse_limit() == before
    with transaction.atomic():  # an outer block of the caller's is left as it was
        with joins_as_written():
            pass
        assert join_collapse_limit() == before


@pytest.mark.parametrize("path", ["/api/runs/?project=alpha", "/api/evaluations/?project=alpha"])
def test_a_list_of_runs_counts_and_reads_its_page_planned_as_written(
    seed: Seed, db: None, path: str
) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {seed.tokens['member']}")
    statements: list[str] = []

    def record(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        statements.append(sql)
        return execute(sql, params, many, context)

    before = join_collapse_limit()
    with connection.execute_wrapper(record):
        response = client.get(path)
    assert response.status_code == 200, response.content
    assert response.json()["count"] >= 1
    start = next(i for i, sql in enumerate(statements) if SET_TO_ONE in sql)
    count, page, restore = statements[start + 1 : start + 4]
    assert count.startswith("SELECT COUNT(*)")
    assert page.startswith('SELECT "runs_run"."id"') and page.count("JOIN") >= 8
    assert "set_config('join_collapse_limit', %s, true)" in restore
    assert join_collapse_limit() == before  # nothing set for the queries after it

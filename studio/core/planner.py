"""Planner settings a query may need, scoped to that query.

The runs and evaluations lists fetch each run with its project, creator and every input
(model, dataset and validation versions with their datasets, reward version with its
function) in one query of ten relations. Every join is a to-one lookup by primary key,
so the order the ORM writes them in (the run first, then each lookup) is the only
sensible one; yet Postgres searches the join orders first, and with a LIMIT it weighs a
fast-start plan for each too. Measured by `bench/runs_list_planning.py` (the permission
matrix's seed plus 300 runs, the 2-core VM, 2026-11-30): the runs list's page query
planned in 12.8 ms with the default `join_collapse_limit` (8) and 1.8 ms with 1, the
evaluations list's in 18.2 and 2.5 ms; each ran in the same time either way (6.6, 0.8 ms).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import DEFAULT_DB_ALIAS, connections, transaction


@contextmanager
def joins_as_written(using: str = DEFAULT_DB_ALIAS) -> Iterator[None]:
    """Queries run inside plan their explicit joins in the order they are written
    (`join_collapse_limit` = 1), and only they: the setting is local to a transaction
    of their own and put back on the way out. An error rolls that transaction (or its
    savepoint, inside an outer one) back, and with it the setting."""
    with transaction.atomic(using=using), connections[using].cursor() as cursor:
        # The CTE is read before the setting changes (a select list's order is not).
        cursor.execute(
            "WITH before AS MATERIALIZED (SELECT current_setting('join_collapse_limit') AS v) "
            "SELECT v, set_config('join_collapse_limit', '1', true) FROM before"
        )
        previous = cursor.fetchone()[0]
        yield
        cursor.execute("SELECT set_config('join_collapse_limit', %s, true)", [previous])

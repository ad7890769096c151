"""Alerts and the database: the history the rules read, and storing what fired."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.db import connection
from django.db.models import Q
from psycopg.types.json import Jsonb

from studio.telemetry.alerts.rules import (
    BASELINE_STEPS,
    COMPONENT_PREFIX,
    COMPONENT_SUFFIX,
    COOLDOWN_STEPS,
    RECENT_STEPS,
    RESPONSE_LENGTH,
    SPIKE_LOOKBACK,
    WATCHED,
    Alert,
    History,
    evaluate,
)
from studio.telemetry.models import MetricPoint, RunAlert


def _watched() -> Q:
    return Q(key__in=WATCHED) | Q(key__startswith=COMPONENT_PREFIX, key__endswith=COMPONENT_SUFFIX)


def load_history(run_id: int, steps: Iterable[int]) -> History:
    wanted = sorted(set(steps))
    lookback = max(SPIKE_LOOKBACK, RECENT_STEPS) + 1
    series: dict[str, dict[int, float]] = {}
    points = (
        MetricPoint.objects.filter(
            _watched(),
            run_id=run_id,
            superseded=False,
            step__gte=wanted[0] - lookback,
            step__lte=wanted[-1],
        )
        .order_by("attempt", "seq")  # a later report of the same step wins
        .values_list("key", "step", "value")
    )
    for key, step, value in points:
        series.setdefault(key, {})[step] = value
    drifting = [key for key in series if key == RESPONSE_LENGTH or key not in WATCHED]
    baselines = {key: _first_values(run_id, key) for key in drifting}
    since = wanted[0] - COOLDOWN_STEPS
    last_alerts: dict[str, tuple[int, str]] = {}
    for kind, step, severity in (
        RunAlert.objects.filter(run_id=run_id, step__gte=since, step__lte=wanted[-1])
        .order_by("step")
        .values_list("kind", "step", "severity")
    ):
        last_alerts[kind] = (step, severity)
    return History(series, baselines, last_alerts)


def _first_values(run_id: int, key: str) -> list[float]:
    """The values of the run's first BASELINE_STEPS live steps of `key`."""
    rows = (
        MetricPoint.objects.filter(run_id=run_id, key=key, superseded=False)
        .order_by("step", "-attempt", "-seq")
        .values_list("step", "value")[: BASELINE_STEPS * 2]
    )
    first: dict[int, float] = {}
    for step, value in rows:
        first.setdefault(step, value)
    return list(first.values())[:BASELINE_STEPS]


def raise_alerts(
    run_id: int, attempt: int, step_seqs: Mapping[int, int]
) -> list[tuple[int, Alert]]:
    """Evaluate the steps just ingested (step -> seq of the record that carried it) and
    store the alerts that fired; returns (seq, alert) for those newly stored."""
    if not step_seqs:
        return []
    alerts = evaluate(load_history(run_id, step_seqs), step_seqs)
    if not alerts:
        return []
    rows = [
        (run_id, attempt, step_seqs[a.step], a.step, a.kind, a.severity, a.message, a.values)
        for a in alerts
    ]
    stored = _insert(rows)
    return [(step_seqs[a.step], a) for a in alerts if (a.kind, a.step) in stored]


def _insert(rows: list[tuple[Any, ...]]) -> set[tuple[str, int]]:
    sql = (
        "INSERT INTO telemetry_runalert "
        "(run_id, attempt, seq, step, kind, severity, message, values, created_at) "
        "VALUES " + ", ".join(["(%s, %s, %s, %s, %s, %s, %s, %s, now())"] * len(rows)) + " "
        "ON CONFLICT (run_id, kind, step) DO NOTHING RETURNING kind, step"
    )
    params = [v for row in rows for v in (*row[:7], Jsonb(row[7]))]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return {(kind, step) for kind, step in cursor.fetchall()}

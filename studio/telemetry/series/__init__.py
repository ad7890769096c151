"""Reading metric series: the keys a run has, min/max downsampling in SQL, CSV rows.

Only live points count everywhere: a point a later attempt superseded (it lies past
the step that attempt resumed from) is history, not part of the curve.

Downsampling is min/max bucketing. A series' steps are cut into at most `buckets`
equal-width step buckets; each bucket contributes its lowest and its highest point
(at their real steps), and the series' first and last points are always kept. Every
spike therefore survives, at most ``2 * buckets + 2`` points come back, and a series
spanning at most ``2 * buckets`` steps comes back whole (its buckets are one or two
steps wide).

Postgres does the work, and reads few rows: MetricTile holds the min and max of each
key over aligned blocks of 16 and 128 steps (kept exact by triggers, migration 0003).
Bucket widths are rounded up to whole tiles (at most 1.5x wider, so at least 2/3 of
the asked-for points come back) and a bucket merges its tiles; only the partial
tiles at the two ends of the step range are read point by point. Series too short
for tiles are read point by point. ``min(ARRAY[value, step])`` is an arg-min that
needs no sort. Non-finite values (NaN, inf) come back as None; Postgres orders NaN
above every number, so a NaN is a bucket's maximum.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import connection

from studio.telemetry.models import MetricPoint

STEP_MAX = 2**31 - 1  # MetricPoint.step is a 32-bit integer


@dataclass(frozen=True)
class StepRange:
    first: int = 0
    last: int = STEP_MAX


@dataclass
class Series:
    run_id: int
    key: str
    total: int = 0  # live points in the step range, before downsampling
    steps: list[int] = field(default_factory=list)
    values: list[float | None] = field(default_factory=list)
    # The step buckets the points were picked from: bucket i covers steps
    # [origin + i * width, origin + (i + 1) * width). Charts draw a min/max band per bucket.
    bucket_origin: int = 0
    bucket_width: int = 1

    @property
    def downsampled(self) -> bool:
        return len(self.steps) < self.total


def buckets_for(points: int) -> int:
    """Buckets such that two points per bucket plus the two ends fit in `points`."""
    return max(1, (points - 2) // 2)


def finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


_KEYS_SQL = """
WITH RECURSIVE found(key) AS (
    (SELECT key FROM telemetry_metricpoint
      WHERE run_id = %(run)s AND NOT superseded ORDER BY key LIMIT 1)
    UNION ALL
    SELECT (SELECT m.key FROM telemetry_metricpoint m
             WHERE m.run_id = %(run)s AND NOT m.superseded AND m.key > found.key
             ORDER BY m.key LIMIT 1)
      FROM found WHERE found.key IS NOT NULL
)
SELECT key FROM found WHERE key IS NOT NULL
"""


def metric_keys(run_id: int) -> list[str]:
    """The run's metric keys, sorted. A skip scan: one index probe per key, so a
    run with millions of points answers as fast as one with a hundred."""
    with connection.cursor() as cursor:
        cursor.execute(_KEYS_SQL, {"run": run_id})
        return [key for (key,) in cursor.fetchall()]


TILE_SIZES = (16, 128)  # steps per MetricTile; must match migration 0003's triggers

# The first and last live point of each (run, key) in the step range: two index probes.
_ENDS_SQL = """
SELECT r.run_id, k.key, f.step, f.value, l.step, l.value
  FROM unnest(%(runs)s::bigint[]) AS r(run_id)
 CROSS JOIN unnest(%(keys)s::text[]) AS k(key)
 CROSS JOIN LATERAL (
       SELECT m.step, m.value FROM telemetry_metricpoint m
        WHERE m.run_id = r.run_id AND m.key = k.key AND NOT m.superseded
          AND m.step BETWEEN %(first)s AND %(last)s
        ORDER BY m.step LIMIT 1) AS f
 CROSS JOIN LATERAL (
       SELECT m.step, m.value FROM telemetry_metricpoint m
        WHERE m.run_id = r.run_id AND m.key = k.key AND NOT m.superseded
          AND m.step BETWEEN %(first)s AND %(last)s
        ORDER BY m.step DESC LIMIT 1) AS l
 ORDER BY r.run_id, k.key
"""

# One row per (series, bucket): whole tiles t0..t1 of `size` steps plus the points of
# the partial tiles at both ends ([a0, b0] and [a1, b1]), grouped into `width`-step
# buckets counted from `origin`.
_BUCKETS_SQL = """
SELECT v.i, b.n, b.lo[1], b.lo[2]::integer, b.hi[1], b.hi[2]::integer
  FROM unnest(%(i)s::integer[], %(run)s::bigint[], %(key)s::text[], %(origin)s::bigint[],
              %(width)s::bigint[], %(size)s::bigint[], %(t0)s::bigint[], %(t1)s::bigint[],
              %(a0)s::bigint[], %(b0)s::bigint[], %(a1)s::bigint[], %(b1)s::bigint[])
       AS v(i, run_id, key, origin, width, size, t0, t1, a0, b0, a1, b1)
 CROSS JOIN LATERAL (
       SELECT (x.step - v.origin) / v.width AS bucket, sum(x.n) AS n,
              min(ARRAY[x.lo_value, x.lo_step]) AS lo, max(ARRAY[x.hi_value, x.hi_step]) AS hi
         FROM (SELECT t.tile * t.size AS step, t.n, t.min_value AS lo_value,
                      t.min_step AS lo_step, t.max_value AS hi_value, t.max_step AS hi_step
                 FROM telemetry_metrictile t
                WHERE t.run_id = v.run_id AND t.key = v.key AND t.size = v.size
                  AND t.tile BETWEEN v.t0 AND v.t1
               UNION ALL
               SELECT m.step, 1, m.value, m.step, m.value, m.step
                 FROM telemetry_metricpoint m
                WHERE m.run_id = v.run_id AND m.key = v.key AND NOT m.superseded
                  AND m.step BETWEEN v.a0 AND v.b0
               UNION ALL
               SELECT m.step, 1, m.value, m.step, m.value, m.step
                 FROM telemetry_metricpoint m
                WHERE m.run_id = v.run_id AND m.key = v.key AND NOT m.superseded
                  AND m.step BETWEEN v.a1 AND v.b1) AS x
        GROUP BY 1) AS b
 ORDER BY v.i, b.bucket
"""


@dataclass(frozen=True)
class Plan:
    """How one series in [first, last] is read: buckets of `width` steps counted from
    `origin`; tiles t0..t1 of `size` steps (size 0: none); points in [a0, b0] and
    [a1, b1] (empty when a > b)."""

    origin: int
    width: int
    size: int
    t0: int
    t1: int
    a0: int
    b0: int
    a1: int
    b1: int


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def plan(first: int, last: int, buckets: int) -> Plan:
    width = ceil_div(last - first + 1, buckets)
    for size in sorted(TILE_SIZES, reverse=True):
        origin = first // size * size  # buckets start on tile boundaries
        tiled = ceil_div(ceil_div(last - origin + 1, buckets), size) * size
        t0, t1 = ceil_div(first, size), (last + 1) // size - 1  # whole tiles in range
        if 2 * tiled <= 3 * width and t0 <= t1:
            return Plan(origin, tiled, size, t0, t1, first, t0 * size - 1, (t1 + 1) * size, last)
    return Plan(first, width, 0, 1, 0, first, last, 1, 0)


Point = tuple[int, float]


def same(a: Point, b: Point) -> bool:
    """The same point, counting NaN as equal to itself."""
    return a[0] == b[0] and (a[1] == b[1] or (math.isnan(a[1]) and math.isnan(b[1])))


def bucket_points(low: Point, high: Point) -> list[Point]:
    """A bucket's lowest and highest point, in step order (once if they are one)."""
    if same(low, high):
        return [low]
    return [low, high] if low[0] <= high[0] else [high, low]


def downsample(
    run_ids: Sequence[int], keys: Sequence[str], points: int, steps: StepRange
) -> list[Series]:
    """Series of each (run, key) with points in range, at most `points` points each,
    ordered by run id then key. (run, key) pairs without points are left out."""
    buckets = buckets_for(points)
    with connection.cursor() as cursor:
        cursor.execute(
            _ENDS_SQL,
            {"runs": list(run_ids), "keys": list(keys), "first": steps.first, "last": steps.last},
        )
        ends = cursor.fetchall()
        plans = [plan(first, last, buckets) for _, _, first, _, last, _ in ends]
        columns: dict[str, list[Any]] = {
            "i": list(range(len(ends))),
            "run": [run_id for run_id, *_ in ends],
            "key": [key for _, key, *_ in ends],
        }
        for name in ("origin", "width", "size", "t0", "t1", "a0", "b0", "a1", "b1"):
            columns[name] = [getattr(p, name) for p in plans]
        cursor.execute(_BUCKETS_SQL, columns)
        rows = cursor.fetchall()
    found = [
        Series(run_id, key, bucket_origin=p.origin, bucket_width=p.width)
        for (run_id, key, *_), p in zip(ends, plans, strict=True)
    ]
    picked: list[list[Point]] = [[] for _ in ends]
    for i, n, lo_value, lo_step, hi_value, hi_step in rows:
        found[i].total += n
        picked[i] += bucket_points((lo_step, lo_value), (hi_step, hi_value))
    for series, chosen, (_, _, *ends_of) in zip(found, picked, ends, strict=True):
        first, last = (ends_of[0], ends_of[1]), (ends_of[2], ends_of[3])
        if not chosen or not same(chosen[0], first):  # empty only if a write raced us
            chosen.insert(0, first)
        if not same(chosen[-1], last):
            chosen.append(last)
        series.steps = [step for step, _ in chosen]
        series.values = [finite_or_none(value) for _, value in chosen]
    return found


def metric_rows(
    run_id: int, keys: Sequence[str] | None, steps: StepRange
) -> Iterator[tuple[int, str, float]]:
    """(step, key, value) of every live point, by key then step, read with a
    server-side cursor so an export of millions of points never sits in memory."""
    points = MetricPoint.objects.filter(
        run_id=run_id, superseded=False, step__gte=steps.first, step__lte=steps.last
    )
    if keys:
        points = points.filter(key__in=keys)
    yield from (
        points.order_by("key", "step").values_list("step", "key", "value").iterator(chunk_size=5000)
    )

"""Wall-clock time of metric steps, for charts drawn against time instead of step.

Points don't store a time; the record that carried them does (IngestedRecord.emitted_at,
the trainer's clock). A step's time is when its live metrics record was emitted (the
latest, if a step was reported in several). Looking up every returned point's step is
as slow as the downsampling itself (40 keys x 1000 points touch ~16k distinct steps),
so the run's step -> time curve is read as at most `ANCHORS` evenly spaced anchors
(every step for shorter runs, and always the first and last) and each point's time is
interpolated between its two neighbouring anchors: exact at anchors, and off only where
a run paused between two anchors.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection

ANCHORS = 2000

_ANCHORS_SQL = """
SELECT step, at FROM (
    SELECT step, max(emitted_at) AS at,
           row_number() OVER (ORDER BY step) AS n, count(*) OVER () AS total
      FROM telemetry_ingestedrecord
     WHERE run_id = %(run)s AND kind = 'metrics' AND NOT superseded AND step IS NOT NULL
     GROUP BY step) AS steps
 WHERE (n - 1) %% greatest(total / %(anchors)s, 1) = 0 OR n = total
 ORDER BY step
"""


def time_anchors(run_id: int) -> tuple[list[int], list[float]]:
    """(steps, unix seconds), ascending by step; empty when nothing was ingested."""
    with connection.cursor() as cursor:
        cursor.execute(_ANCHORS_SQL, {"run": run_id, "anchors": ANCHORS})
        rows = cursor.fetchall()
    return [step for step, _ in rows], [at for _, at in rows]


def interpolate(
    anchors: tuple[Sequence[int], Sequence[float]], steps: Sequence[int]
) -> list[float | None]:
    """Each step's time from the anchors; None outside their range. Series come with
    ascending steps, so one walk along the anchors serves them all (a step lower than
    the one before restarts the walk)."""
    known, times = anchors
    found: list[float | None] = []
    i, last = 0, len(known) - 1
    for step in steps:
        if not known or step < known[0] or step > known[last]:
            found.append(None)
            continue
        if i and known[i - 1] >= step:
            i = 0
        while known[i] < step:  # stops at the last anchor at the latest (step <= it)
            i += 1
        if known[i] == step:
            found.append(times[i])
        else:  # known[i - 1] < step < known[i]
            s0, t0, s1, t1 = known[i - 1], times[i - 1], known[i], times[i]
            found.append(t0 + (t1 - t0) * (step - s0) / (s1 - s0))
    return found

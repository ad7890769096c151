"""A sweep's metric, read from its trials' runs: a logged metric key, or by default the
validation score (the mean over the run's `val-core/<data source>/reward/mean@<n>` keys,
one per data source, at each step it validated)."""

from __future__ import annotations

import re
from collections import defaultdict

from studio.telemetry.models import MetricPoint

VALIDATION_SCORE = re.compile(r"^val-core/.+/reward/mean@\d+$")
VALIDATION_LABEL = "validation score"


def metric_label(metric: str) -> str:
    return metric or VALIDATION_LABEL


def metric_points(run_id: int, metric: str, after_step: int | None) -> list[tuple[int, float]]:
    """The run's (step, metric value) after `after_step`, in step order; a later report
    of a step (a resumed attempt) wins."""
    points = MetricPoint.objects.filter(run_id=run_id, superseded=False)
    if after_step is not None:
        points = points.filter(step__gt=after_step)
    if metric:
        points = points.filter(key=metric)
    else:
        points = points.filter(key__startswith="val-core/", key__contains="/reward/mean@")
    by_step: dict[int, dict[str, float]] = defaultdict(dict)
    for step, key, value in points.order_by("attempt", "seq").values_list("step", "key", "value"):
        if metric or VALIDATION_SCORE.match(key):
            by_step[step][key] = value
    return [(step, sum(v.values()) / len(v)) for step, v in sorted(by_step.items())]

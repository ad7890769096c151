"""How often a run's reward function failed: the mean of its steps' `reward/error_rate`
(every step scores a batch of the same size, so this is the share of scored rows whose
reward call failed), for every run of a page at once in one query."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Avg

from studio.telemetry.models import MetricPoint

ERROR_RATE_KEY = "reward/error_rate"  # trainer.training.metrics


def reward_error_rates(run_ids: Sequence[int]) -> dict[int, float | None]:
    """Run id -> the share of its scored rows whose reward failed (None: no step yet)."""
    found: dict[int, float | None] = dict.fromkeys(run_ids)
    if not run_ids:
        return found
    rows = (
        MetricPoint.objects.filter(run__in=run_ids, key=ERROR_RATE_KEY, superseded=False)
        .values("run")
        .annotate(rate=Avg("value"))
    )
    for row in rows:
        found[row["run"]] = row["rate"]
    return found

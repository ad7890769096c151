"""Celery tasks that move sweeps on (studio.sweeps.driver): short and idempotent.

- `advance_sweep(sweep_id)`: one pass over one sweep, nudged after it is created,
  resumed or given trials.
- `advance_sweeps()`: Celery beat, every RLSTUDIO_RECONCILE_INTERVAL_S: a pass over
  every sweep that is running or has live trials. It reports the trials' new metric
  values to the pruner as they stream in, and is the backstop for every lost nudge.
"""

from __future__ import annotations

import logging

from celery import Task
from django.db.models import Q

from studio.sweeps.driver import advance
from studio.sweeps.models import Sweep, SweepStatus, TrialState
from workers.celery_app import app
from workers.delivery import over_delivery_cap

logger = logging.getLogger(__name__)


@app.task(
    bind=True, name="workers.advance_sweep", ignore_result=True, soft_time_limit=50, time_limit=60
)
def advance_sweep(self: Task, sweep_id: int) -> str:
    if over_delivery_cap(self):
        return "dropped"
    advance(sweep_id)
    return "advanced"


@app.task(
    bind=True, name="workers.advance_sweeps", ignore_result=True, soft_time_limit=50, time_limit=60
)
def advance_sweeps(self: Task) -> str:
    if over_delivery_cap(self):
        return "dropped"
    active = Sweep.objects.filter(
        Q(status=SweepStatus.RUNNING) | Q(trials__state=TrialState.RUNNING)
    ).distinct()
    ids = list(active.values_list("pk", flat=True))
    for sweep_id in ids:
        try:
            advance(sweep_id)
        except Exception:  # one broken sweep must not hold the others back
            logger.exception("advance_sweeps: sweep %s", sweep_id)
    return f"{len(ids)} sweeps"

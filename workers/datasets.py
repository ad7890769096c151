"""`import_dataset`: turn a large upload into a dataset version (studio.datasets.imports
does the work), and the sweep that re-enqueues imports no worker is on.

The hard limit stays below the broker's visibility timeout (300 s), or Redis would
hand a still-running import to a second worker; the claim's lease covers the hard
limit, so a redelivery waits for a live import instead of running it twice.
"""

from __future__ import annotations

from celery import Task

from studio.datasets import imports
from workers.celery_app import app
from workers.delivery import over_delivery_cap

SOFT_LIMIT_S = 240
HARD_LIMIT_S = 270
LEASE_S = HARD_LIMIT_S + 10
SWEEP_AFTER_S = 60


@app.task(
    bind=True,
    name="workers.import_dataset",
    ignore_result=True,
    soft_time_limit=SOFT_LIMIT_S,
    time_limit=HARD_LIMIT_S,
    max_retries=10,
)
def import_dataset(self: Task, import_id: int) -> str:
    if over_delivery_cap(self):
        return "dropped"
    taken = imports.take(import_id, LEASE_S)
    if taken is None:
        return "nothing to do"
    if isinstance(taken, float):  # another worker holds it: look again when its lease ends
        raise self.retry(countdown=min(taken + 1, LEASE_S))
    return str(imports.run(taken))


@app.task(
    name="workers.sweep_dataset_imports", ignore_result=True, soft_time_limit=25, time_limit=30
)
def sweep_dataset_imports() -> int:
    stalled = imports.stalled(SWEEP_AFTER_S)
    for import_id in stalled:
        import_dataset.apply_async((import_id,), expires=SWEEP_AFTER_S)
    return len(stalled)

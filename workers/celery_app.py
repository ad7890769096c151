"""The Celery application: short, idempotent control tasks only.

A training run is never a Celery task; a launch (workers/runs.py) submits a Ray
job and returns. These settings make redelivery safe and bounded. Every task goes to
the `control` queue, which `rlstudio up`'s worker consumes; beat runs `reconcile_runs`.
"""

import os

from celery import Celery
from django.conf import settings

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studio.settings")

app = Celery("rlstudio")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.update(
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    task_time_limit=120,
    task_soft_time_limit=100,
    worker_prefetch_multiplier=1,
    broker_connection_retry_on_startup=True,
    task_default_queue="control",
    broker_transport_options={"visibility_timeout": 300},
)
app.autodiscover_tasks(["workers"])
# Task modules beside this one (autodiscovery alone finds only `workers.tasks`).
app.conf.include = [
    *app.conf.include,
    "workers.rewards",
    "workers.runs",
    "workers.datasets",
    "workers.models",
    "workers.playground",
    "workers.notifications",
    "workers.sweeps",
]
_RECONCILE_EVERY_S = float(settings.RLSTUDIO_RECONCILE_INTERVAL_S)
app.conf.beat_schedule = {
    "reconcile-runs": {
        "task": "workers.reconcile_runs",
        "schedule": _RECONCILE_EVERY_S,
        # A tick nobody ran in time is dropped, not stacked behind the next ones.
        "options": {"expires": max(2 * _RECONCILE_EVERY_S, 5.0)},
    },
    "advance-sweeps": {
        "task": "workers.advance_sweeps",
        "schedule": _RECONCILE_EVERY_S,
        "options": {"expires": max(2 * _RECONCILE_EVERY_S, 5.0)},
    },
    "sweep-dataset-imports": {
        "task": "workers.sweep_dataset_imports",
        "schedule": 60.0,
        "options": {"expires": 60.0},
    },
    "sweep-reward-test-runs": {
        "task": "workers.sweep_reward_test_runs",
        "schedule": 60.0,
        "options": {"expires": 60.0},
    },
}


@app.task(name="workers.ping")
def ping() -> str:
    """A no-op used by health checks and tests to prove a worker is consuming."""
    return "pong"

"""The Celery application: short, idempotent control tasks only.

A training run is never a Celery task; `launch_run` (see the runs issue) submits a
Ray job and returns. These settings make redelivery safe and bounded.
"""

import os

from celery import Celery

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


@app.task(name="workers.ping")
def ping() -> str:
    """A no-op used by health checks and tests to prove a worker is consuming."""
    return "pong"

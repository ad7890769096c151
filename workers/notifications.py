"""`send_notification`: post one notice to its project's webhook and email the members
who chose it (studio.projects.notify). Never retried: a late notice is worth less than
no storm of them."""

from __future__ import annotations

from typing import Any

from studio.projects import notify
from workers.celery_app import app


@app.task(
    name=notify.TASK_NAME, ignore_result=True, soft_time_limit=50, time_limit=60, acks_late=False
)
def send_notification(data: dict[str, Any]) -> dict[str, Any]:
    return notify.deliver(data)

"""Nudging the workers from the API: after a commit, enqueue a control task.

These are only nudges. Create and resume enqueue `reconcile_runs` (not `launch_run`)
so the queue's order and resource checks decide what starts, in one place; cancel
enqueues `cancel_run` so the job stops at once. If the broker is down the nudge is
lost and nothing else is: Celery beat runs `reconcile_runs` every few seconds, and it
starts queued runs and finishes cancels by itself.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction

logger = logging.getLogger(__name__)

RECONCILE = "workers.reconcile_runs"
CANCEL = "workers.cancel_run"


def send(task: str, args: list[int]) -> None:
    from kombu.exceptions import OperationalError

    from workers.celery_app import app  # the broker settings live with the app

    # A nudge older than a few beats is worthless: beat has reconciled since.
    expires = max(30.0, settings.RLSTUDIO_RECONCILE_INTERVAL_S * 10)
    try:
        app.send_task(task, args=args, expires=expires, retry=False)
    except OperationalError as exc:
        logger.warning("%s%s not enqueued (reconcile_runs will catch up): %s", task, args, exc)


def reconcile_soon() -> None:
    transaction.on_commit(lambda: send(RECONCILE, []))


def cancel_soon(run_id: int) -> None:
    transaction.on_commit(lambda: send(CANCEL, [run_id]))

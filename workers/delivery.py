"""A cap on redeliveries of one task message.

With `acks_late` and `task_reject_on_worker_lost`, a message whose worker died is
delivered again. That is what makes the control tasks survive a crash, but a message
that kills its worker every time (a poison message) would loop forever. Each delivery
is counted in Redis under the task id and retry number; past the cap the task is
dropped with an error in the log (`reconcile_runs` still looks after the run).
"""

from __future__ import annotations

import logging

import redis
from celery import Task
from django.conf import settings

logger = logging.getLogger(__name__)

COUNT_TTL_S = 24 * 3600


def over_delivery_cap(task: Task) -> bool:
    """Count this delivery; True when it is one too many (drop the task)."""
    request = task.request
    key = f"rlstudio:deliveries:{request.id}:{request.retries}"
    try:
        client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2)
        count = client.incr(key)
        client.expire(key, COUNT_TTL_S)
    except redis.RedisError as exc:  # can't count: run it (the broker is Redis too)
        logger.warning("could not count deliveries of %s: %s", request.id, exc)
        return False
    if int(count) > settings.RLSTUDIO_MAX_TASK_DELIVERIES:
        logger.error(
            "%s[%s] delivered %s times, its worker died each time; dropping it (args %s)",
            task.name,
            request.id,
            count,
            request.args,
        )
        return True
    return False

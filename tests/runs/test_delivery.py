"""The cap on redeliveries of one task message, counted in (real) Redis."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

from workers.delivery import over_delivery_cap


def delivery(task_id: str, retries: int = 0) -> SimpleNamespace:
    """What a task looks like to the counter: its name and current request."""
    request = SimpleNamespace(id=task_id, retries=retries, args=[7])
    return SimpleNamespace(name="workers.launch_run", request=request)


def test_a_message_that_keeps_killing_its_worker_is_dropped_after_the_cap(settings):
    settings.RLSTUDIO_MAX_TASK_DELIVERIES = 3
    task_id = str(uuid.uuid4())

    verdicts = [over_delivery_cap(delivery(task_id)) for _ in range(4)]  # type: ignore[arg-type]

    assert verdicts == [False, False, False, True]


def test_a_retry_is_a_new_message_with_its_own_count(settings):
    settings.RLSTUDIO_MAX_TASK_DELIVERIES = 1
    task_id = str(uuid.uuid4())

    assert over_delivery_cap(delivery(task_id, retries=0)) is False  # type: ignore[arg-type]
    assert over_delivery_cap(delivery(task_id, retries=1)) is False  # type: ignore[arg-type]
    assert over_delivery_cap(delivery(task_id, retries=1)) is True  # type: ignore[arg-type]

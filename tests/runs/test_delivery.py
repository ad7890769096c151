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


def test_a_run_has_one_launch_message_pending_however_many_passes_ask(settings):
    """Each reconcile pass asks to launch every queued run that fits; a run whose launch
    message still waits gets no second one, and once its launch ran, it may get another."""
    import json

    import redis

    from workers.runs import LAUNCH_PENDING, launch_run, send_launches

    settings.RAY_ADDRESS = ""  # the launch task returns at once
    client = redis.Redis.from_url(settings.REDIS_URL)
    run_id = uuid.uuid4().int % 10**9 + 10**9  # no run has it: nothing else waits for it
    client.delete(LAUNCH_PENDING.format(run_id=run_id))

    def waiting() -> int:
        bodies = [json.loads(raw) for raw in client.lrange("control", 0, -1)]
        return sum(b["headers"].get("argsrepr", "").startswith(f"({run_id},") for b in bodies)

    assert [send_launches([run_id], 10.0) for _ in range(3)] == [1, 0, 0]
    assert waiting() == 1
    assert client.ttl(LAUNCH_PENDING.format(run_id=run_id)) <= 10  # a lost message expires

    assert launch_run.apply(args=(run_id,)).get() == "ray-not-configured"
    assert send_launches([run_id], 10.0) == 1

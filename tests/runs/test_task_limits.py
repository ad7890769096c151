"""Every Celery task can be sent, and beat's schedule names only tasks that exist.

Celery refuses to send a task whose soft time limit is above its hard one, and a task's
soft limit defaults to the app's (100 s): a task given only `time_limit=30` could not be
sent at all, and beat logged "Couldn't apply scheduled task" every minute instead of
running it (the reward test-run and dataset import sweeps, until 2026-11-29).
"""

from __future__ import annotations

import pytest

from workers.celery_app import app

app.loader.import_default_modules()
OUR_TASKS = sorted(name for name in app.tasks if name.startswith("workers."))


def test_the_app_registers_our_tasks() -> None:
    assert "workers.reconcile_runs" in OUR_TASKS
    assert len(OUR_TASKS) >= 10


@pytest.mark.parametrize("name", OUR_TASKS)
def test_a_task_is_warned_before_it_is_killed(name: str) -> None:
    task = app.tasks[name]

    assert task.time_limit, f"{name} has no hard time limit"
    assert task.soft_time_limit, f"{name} has no soft time limit"
    assert task.soft_time_limit < task.time_limit, (
        f"{name}: soft limit {task.soft_time_limit} s is not below its hard limit "
        f"{task.time_limit} s, so Celery refuses to send it"
    )


@pytest.mark.parametrize("entry", sorted(app.conf.beat_schedule))
def test_each_scheduled_task_exists(entry: str) -> None:
    assert app.conf.beat_schedule[entry]["task"] in OUR_TASKS

"""`workers.test_reward`: run one reward test-run (studio.rewards.lifecycle does the work);
`workers.sweep_reward_test_runs`: the beat task that fails test-runs whose worker is gone.

Idempotent: the test-run is claimed with a conditional update, so a redelivered task
for a finished test-run does nothing, and one for a test-run another worker is running
comes back once that one's deadline has passed (then it is failed as stale if it is
still running). The soft limit fails the test-run from inside the task; the hard limit
kills the process and `on_failure` (run by the worker's main process) fails it.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import Task
from celery.exceptions import SoftTimeLimitExceeded, TimeLimitExceeded

from studio.rewards import limits
from workers.celery_app import app

logger = logging.getLogger(__name__)

SOFT_LIMIT_S = limits.task_soft_limit_s()
HARD_LIMIT_S = limits.task_hard_limit_s()
MAX_COUNTDOWN_S = 240.0  # an ETA past the broker's visibility timeout would be redelivered


class TestRewardTask(Task):
    __test__ = False  # not a pytest test class, whatever its name says

    def on_failure(
        self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any
    ) -> None:
        from studio.rewards import lifecycle

        if not args:
            return
        if isinstance(exc, TimeLimitExceeded):  # the process was killed: say so
            code = "time_limit"
            message = f"The test-run was stopped at its hard time limit of {HARD_LIMIT_S:g} s."
        else:  # anything the task did not end itself (it ends what it expects)
            code, message = "internal", f"Internal error: {type(exc).__name__}: {exc}"
        if lifecycle.fail(int(args[0]), code, message):
            logger.warning("reward test-run %s failed: %r", args[0], exc)


@app.task(
    bind=True,
    base=TestRewardTask,
    name="workers.test_reward",
    soft_time_limit=SOFT_LIMIT_S,
    time_limit=HARD_LIMIT_S,
    acks_late=True,
    max_retries=5,
)
def test_reward(self: Task, test_run_id: int) -> str:
    from studio.rewards import lifecycle

    claim = lifecycle.take(test_run_id, HARD_LIMIT_S)
    if claim.test_run is None:
        if claim.retry_in_s is not None:
            raise self.retry(countdown=min(claim.retry_in_s, MAX_COUNTDOWN_S))
        return claim.note
    try:
        ended = lifecycle.execute(claim.test_run)
    except SoftTimeLimitExceeded:
        lifecycle.fail(
            test_run_id,
            "time_limit",
            f"The test-run ran past its time limit of {SOFT_LIMIT_S:g} s.",
        )
        return f"test-run {test_run_id} failed: time limit"
    except Exception as exc:  # recorded for the user, then Celery logs it
        lifecycle.fail(test_run_id, "internal", f"Internal error: {type(exc).__name__}: {exc}")
        raise
    return f"test-run {test_run_id} {ended.status}"


@app.task(
    name="workers.sweep_reward_test_runs", ignore_result=True, soft_time_limit=25, time_limit=30
)
def sweep_reward_test_runs() -> int:
    """Fail running test-runs past their deadline and queued ones no worker took (Celery
    beat, every minute: reads never write, so this is what ends them)."""
    from studio.rewards import lifecycle  # imported where used, as by the tasks above

    return lifecycle.fail_stale()

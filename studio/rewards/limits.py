"""Time limits of a reward test-run, from the settings.

No model imports here: the Celery task module reads these when it is imported, before
Django's app registry is ready. Keep the hard limit under the broker's visibility
timeout (300 s, workers/celery_app.py), or Redis redelivers a task that is still running.
"""

from __future__ import annotations

from django.conf import settings

OVERHEAD_S = 30.0  # reading rows, starting the sandbox pool, writing the result
HARD_MARGIN_S = 15.0  # from the soft limit (the task fails itself) to the hard kill
STALE_MARGIN_S = 15.0  # from the hard kill to when anyone may call the test-run stale
QUEUED_STALE_S = 3600.0  # a test-run still queued after this lost its message


def sample_limit_s() -> float:
    return float(settings.RLSTUDIO_REWARD_TEST_SAMPLE_LIMIT_S)


def score_budget_s() -> float:
    return float(settings.RLSTUDIO_REWARD_TEST_BUDGET_S)


def task_soft_limit_s() -> float:
    """Sampling, then scoring, then the rest: the task raises SoftTimeLimitExceeded."""
    return sample_limit_s() + score_budget_s() + OVERHEAD_S


def task_hard_limit_s() -> float:
    return task_soft_limit_s() + HARD_MARGIN_S


def inline_limit_s() -> float:
    """A test-run scored inside a web request (no sampling)."""
    return score_budget_s() + OVERHEAD_S

"""A run that goes on with failing reward calls says so in its log: at the first step
with errors (naming the user's line) and in a summary at the end."""

from __future__ import annotations

from types import SimpleNamespace

from trainer.rewards.contract import RewardResult
from trainer.training.reward_error_log import RewardErrorLog


def _samples(errors: list[str]) -> list:
    return [SimpleNamespace(reward=RewardResult(score=0.0, error=e)) for e in errors]


def test_the_first_failing_step_and_the_end_of_the_run_are_logged_once():
    log = RewardErrorLog(max_error_rate=0.5)
    raised = "exception: KeyError: 'level' (line 3)\nTraceback ...\n  File \"reward.py\", line 3"
    assert log.observe(1, _samples(["", ""])) is None
    first = log.observe(2, _samples([raised, "", "", ""]))
    assert first is not None
    assert first.startswith("reward errors at step 2: 1 of 4 rows failed")
    assert first.endswith("from the reward code: exception: KeyError: 'level' (line 3)")
    assert log.observe(3, _samples([raised, raised])) is None  # once, not every step
    assert log.summary() == (
        "reward errors in 2 of 3 steps: 3 of 8 scored rows (38%) failed and scored 0 "
        "(the failing samples are in the explorer, errors only)"
    )
    assert RewardErrorLog(0.5).summary() is None

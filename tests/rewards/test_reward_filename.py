"""The user's reward code runs as `reward.py`: its frames in a traceback read
`File "reward.py", line N`, which the studio's run page points at."""

from __future__ import annotations

import traceback

import pytest

from trainer.rewards.errors import RewardCodeError
from trainer.rewards.loader import load_reward

CODE = """def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    return 1.0

LIMIT = 1 / 0
"""


def test_a_reward_that_raises_while_loading_names_reward_py_and_its_line():
    with pytest.raises(RewardCodeError) as caught:
        load_reward(CODE)
    assert str(caught.value).endswith("ZeroDivisionError: division by zero (line 4)")
    frames = traceback.extract_tb(caught.value.__cause__.__traceback__)  # type: ignore[union-attr]
    assert (frames[-1].filename, frames[-1].lineno) == ("reward.py", 4)

"""What a converter (trainer.models.converters) may see of a training step.

The step holds a sequence of `StepHook`s and calls each at three points: around the
rollout, when the step's batch is built (its rows are `RolloutBatch.sample_ids`), and
once its update has run, before the weights move on. The core knows nothing of what a
hook does with them; the CPU speed package's replay recorder is one
(trainer.cpu_speed.replay_recorder), installed by the replay converter.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import Protocol

from trainer.rollout.engine import Completion


class StepHook(Protocol):
    def rollout(self) -> AbstractContextManager[None]:
        """Around a step's rollout (validation and evaluation generate outside it)."""
        ...

    def batch_built(self, completions: list[Completion]) -> None:
        """The step's batch holds these completions, row `i` (sample id `i`) the i-th."""
        ...

    def update_done(self) -> None:
        """The step's update ran: what was kept for it is stale."""
        ...


@contextmanager
def around_rollout(hooks: Sequence[StepHook]) -> Iterator[None]:
    """Every hook's `rollout`, nested in order."""
    with ExitStack() as stack:
        for hook in hooks:
            stack.enter_context(hook.rollout())
        yield

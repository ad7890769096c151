"""Log lines for reward calls that failed while a run goes on: the first step that had
any (with its first error, at the user's line), and a summary when the run ends, so a
run that succeeds with a partly failing reward says so in its log."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from trainer.rollout.collect import Sample


@dataclass
class RewardErrorLog:
    max_error_rate: float
    failed_rows: int = 0
    scored_rows: int = 0
    failed_steps: int = 0
    steps: int = 0

    def observe(self, step: int, samples: Sequence[Sample]) -> str | None:
        """Count a step's results; the warning to log at the first step with errors."""
        failed = [s.reward.error for s in samples if s.reward.error]
        self.steps += 1
        self.scored_rows += len(samples)
        self.failed_rows += len(failed)
        if not failed:
            return None
        self.failed_steps += 1
        if self.failed_steps > 1:
            return None
        first = failed[0].split("\n", 1)[0]
        return (
            f"reward errors at step {step}: {len(failed)} of {len(samples)} rows failed and "
            f"scored 0; the run goes on while a batch's share stays at most "
            f"reward.max_error_rate={self.max_error_rate}. The first, from the reward code: "
            f"{first}"
        )

    def summary(self) -> str | None:
        """The end-of-run line, when any reward call failed."""
        if not self.failed_rows:
            return None
        share = self.failed_rows / self.scored_rows
        return (
            f"reward errors in {self.failed_steps} of {self.steps} steps: "
            f"{self.failed_rows:,} of {self.scored_rows:,} scored rows ({share:.0%}) failed "
            "and scored 0 (the failing samples are in the explorer, errors only)"
        )

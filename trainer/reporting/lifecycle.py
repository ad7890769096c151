"""How a reported run ends: succeeded, failed (with the traceback's tail) or cancelled.

A failure is also written to the run's log, at level error: the status detail becomes the
run's `last_error`, but the log is where a user reads what the trainer said.

Ray's `stop_job` sends SIGTERM, then SIGKILL 3 s later (RAY_JOB_STOP_WAIT_TIME_S). While
training runs, SIGTERM raises `RunCancelled` in the main thread, so the run reports
`cancelled` and flushes within `logging.cancel_flush_timeout_s` before that SIGKILL.
`RunCancelled` is a BaseException, like KeyboardInterrupt, so code that catches
Exception (a reward function's guard, say) cannot swallow it. Code it passes through may
still turn it into an error of its own: raised inside `torch.save`, it left the zip writer
mid-record, and the writer's close raised `RuntimeError: ... unexpected pos` in its place.
So once SIGTERM has been delivered, the run ends `cancelled` whatever unwinds: the user
asked it to stop, and it stopped (the error is logged as a warning).

The CLI then leaves a cancelled run by `trainer.reporting.process_exit.exit_now`, without
the interpreter's teardown. Measured on the 2-core VM (the SIGTERM test in
tests/trainer/test_studio_cli.py): the run had unwound and reported `cancelled` 80 ms
after SIGTERM, and freeing torch's and transformers' modules took 650 ms more; beside a
loaded test suite four times that, past Ray's 3 s.
"""

from __future__ import annotations

import logging
import signal
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

from trainer.config.schema import LoggingConfig
from trainer.reporting.base import MultiReporter
from trainer.reporting.studio import StudioReporter

log = logging.getLogger(__name__)

ERROR_TAIL_LINES = 40
ERROR_TAIL_CHARS = 8000
EXIT_CANCELLED = 128 + signal.SIGTERM
EXIT_INTERRUPTED = 128 + signal.SIGINT


class RunCancelled(BaseException):
    """SIGTERM arrived while training: stop and report `cancelled`."""


def error_tail() -> str:
    """The last lines of the traceback being handled, for the `failed` status detail."""
    lines = traceback.format_exc().rstrip().splitlines()[-ERROR_TAIL_LINES:]
    return "\n".join(lines)[-ERROR_TAIL_CHARS:]


class CancelGuard:
    """While `armed`, SIGTERM raises RunCancelled; afterwards it is only logged, so a
    late SIGTERM cannot cut the final flush short (Ray's SIGKILL bounds it anyway)."""

    def __init__(self) -> None:
        self.armed = True
        self.fired = False  # RunCancelled was raised: whatever unwinds is the cancel

    def on_sigterm(self, signum: int, frame: FrameType | None) -> None:
        if self.armed:
            self.armed = False
            self.fired = True
            raise RunCancelled()
        log.warning("SIGTERM while the run is finishing; still flushing")


@contextmanager
def sigterm_cancels() -> Iterator[CancelGuard]:
    """Install a CancelGuard as the SIGTERM handler for the block, then restore the
    previous one. Outside the main thread signals cannot be handled: the guard is inert."""
    guard = CancelGuard()
    try:
        previous = signal.signal(signal.SIGTERM, guard.on_sigterm)
    except ValueError:
        yield guard
        return
    try:
        yield guard
    finally:
        signal.signal(signal.SIGTERM, previous)


def close_studio(reporter: MultiReporter, timeout: float) -> None:
    for r in reporter.reporters:
        if isinstance(r, StudioReporter):
            r.close(timeout)


def _cancelled(reporter: MultiReporter, cfg: LoggingConfig, detail: str, code: int) -> int:
    reporter.status("cancelled", detail)
    close_studio(reporter, cfg.cancel_flush_timeout_s)
    reporter.close()
    return int(code)


def run_reported(train: Callable[[], object], reporter: MultiReporter, cfg: LoggingConfig) -> int:
    """Run `train()`; report how it ended, flush within the limits, return the exit code
    (an exception in training is re-raised after `failed` is reported)."""
    with sigterm_cancels() as guard:
        try:
            try:
                train()
            finally:
                guard.armed = False
        except RunCancelled:
            return _cancelled(reporter, cfg, "stopped by SIGTERM (cancelled)", EXIT_CANCELLED)
        except KeyboardInterrupt:
            return _cancelled(reporter, cfg, "interrupted (Ctrl-C)", EXIT_INTERRUPTED)
        except Exception:
            if guard.fired:  # RunCancelled turned into another error on its way out
                reporter.log("warning", f"while stopping for the cancel:\n{error_tail()}")
                return _cancelled(reporter, cfg, "stopped by SIGTERM (cancelled)", EXIT_CANCELLED)
            tail = error_tail()
            reporter.log("error", tail)
            reporter.status("failed", tail)
            reporter.close()
            raise
        reporter.close()
        return 0

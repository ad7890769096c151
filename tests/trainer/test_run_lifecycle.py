"""How a reported run ends, without a model: failed with its traceback, cancelled by
SIGTERM (Ray's stop_job) with the reporters closed, succeeded otherwise."""

from __future__ import annotations

import io
import os
import signal
import time
from typing import Any

import pytest
import torch

from trainer.config.schema import LoggingConfig
from trainer.reporting.base import MultiReporter
from trainer.reporting.lifecycle import EXIT_CANCELLED, run_reported


class Recorder:
    def __init__(self) -> None:
        self.statuses: list[tuple[str, str]] = []
        self.logs: list[tuple[str, str]] = []
        self.closed = 0

    def log(self, level: str, message: str) -> None:
        self.logs.append((level, message))

    def status(self, status: str, detail: str = "") -> None:
        self.statuses.append((status, detail))

    def close(self) -> None:
        self.closed += 1


def test_an_exception_reports_failed_with_the_traceback_tail_and_is_re_raised():
    recorder = Recorder()

    def train() -> None:
        raise RuntimeError("loss is nan at step 3")

    with pytest.raises(RuntimeError):
        run_reported(train, MultiReporter([recorder]), LoggingConfig())
    ((status, detail),) = recorder.statuses
    assert status == "failed"
    assert detail.startswith("Traceback") and "RuntimeError: loss is nan at step 3" in detail
    assert recorder.logs == [("error", detail)]  # the Logs tab shows it too
    assert recorder.closed == 1


def test_sigterm_during_training_reports_cancelled_and_restores_the_handler():
    recorder = Recorder()
    before = signal.getsignal(signal.SIGTERM)

    def train() -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # interrupted by the handler
        raise AssertionError("SIGTERM did not stop training")

    started = time.monotonic()
    code = run_reported(train, MultiReporter([recorder]), LoggingConfig())
    assert time.monotonic() - started < 2
    assert code == EXIT_CANCELLED == 143
    assert [s for s, _ in recorder.statuses] == ["cancelled"]
    assert recorder.closed == 1
    assert signal.getsignal(signal.SIGTERM) == before


def test_a_run_that_returns_closes_the_reporters_and_exits_zero():
    recorder = Recorder()
    assert run_reported(lambda: None, MultiReporter([recorder]), LoggingConfig()) == 0
    assert recorder.statuses == [] and recorder.closed == 1


class SigtermMidWrite(io.BytesIO):
    """A file whose third write delivers SIGTERM (Ray's stop_job) to this process."""

    writes = 0

    def write(self, data: Any) -> int:
        self.writes += 1
        if self.writes == 3:
            os.kill(os.getpid(), signal.SIGTERM)
        return super().write(data)


def test_sigterm_in_the_middle_of_torch_save_still_reports_cancelled():
    # torch.save's zip writer, left mid-record by RunCancelled, fails to close and raises
    # "unexpected pos" in its place: a cancel during a checkpoint reported `failed`.
    recorder = Recorder()

    def train() -> None:
        torch.save({f"w{i}": torch.zeros(64, 64) for i in range(8)}, SigtermMidWrite())

    code = run_reported(train, MultiReporter([recorder]), LoggingConfig())
    assert code == EXIT_CANCELLED
    assert [s for s, _ in recorder.statuses] == ["cancelled"]
    [(level, message)] = recorder.logs
    assert level == "warning" and "unexpected pos" in message, message
    assert recorder.closed == 1

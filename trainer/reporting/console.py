"""Console reporter: a progress bar with ETA and one line of key metrics per step.

On a terminal the bar redraws in place; in a log file (no TTY) a bar would
print a line per refresh, so each metric line carries the progress and ETA.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from tqdm import tqdm

from trainer.reporting.base import RunStatus, SampleRecord

KEY_METRICS = (
    ("critic/score/mean", "score"),
    ("actor/pg_loss", "pg_loss"),
    ("actor/entropy", "entropy"),
    ("response_length/mean", "resp_len"),
    ("perf/throughput", "tok/s"),
    ("timing_s/step", "step_s"),
)


def format_metrics(values: dict[str, float]) -> str:
    parts = [f"{label}={values[key]:.4g}" for key, label in KEY_METRICS if key in values]
    parts += [f"{k}={v:.4g}" for k, v in values.items() if k.startswith("val-core/")]
    return " ".join(parts)


def format_eta(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class ConsoleReporter:
    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.interactive = self.stream.isatty()
        self.bar: tqdm | None = None
        self.total = 0
        self.step = 0
        self.first_step: int | None = None
        self.started = time.monotonic()

    def progress(self, step: int, total: int) -> None:
        self.step, self.total = step, total
        if self.first_step is None:
            self.first_step, self.started = step, time.monotonic()
        if not self.interactive:
            return
        if self.bar is None:
            self.bar = tqdm(
                total=total,
                initial=step,
                unit="step",
                file=self.stream,
                dynamic_ncols=True,
                desc="train",
            )
        else:
            self.bar.update(step - self.bar.n)

    def _eta(self) -> str:
        done = self.step - (self.first_step or 0)
        if done <= 0 or not self.total:
            return ""
        rate = (time.monotonic() - self.started) / done
        return f" eta {format_eta(rate * (self.total - self.step))}"

    def _write(self, text: str) -> None:
        if self.bar is not None:
            self.bar.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    def metrics(self, step: int, values: dict[str, float]) -> None:
        where = f"step {step}/{self.total}" if self.total else f"step {step}"
        eta = "" if self.interactive else self._eta()
        self._write(f"{where}{eta}: {format_metrics(values)}")

    def samples(self, step: int, samples: list[SampleRecord]) -> None:
        return None

    def log(self, level: str, message: str) -> None:
        self._write(f"[{level}] {message}")

    def checkpoint(self, step: int, path: str) -> None:
        self.log("info", f"checkpoint at step {step}: {path}")

    def status(self, status: RunStatus, detail: str = "") -> None:
        self.log("info", f"run {status}" + (f": {detail}" if detail else ""))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

"""Console reporter: a progress bar with ETA and one line of key metrics per step."""

from __future__ import annotations

import sys
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


class ConsoleReporter:
    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.bar: tqdm | None = None

    def progress(self, step: int, total: int) -> None:
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

    def metrics(self, step: int, values: dict[str, float]) -> None:
        line = f"step {step}: {format_metrics(values)}"
        if self.bar is not None:
            self.bar.write(line, file=self.stream)
        else:
            print(line, file=self.stream, flush=True)

    def samples(self, step: int, samples: list[SampleRecord]) -> None:
        return None

    def log(self, level: str, message: str) -> None:
        text = f"[{level}] {message}"
        if self.bar is not None:
            self.bar.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    def checkpoint(self, step: int, path: str) -> None:
        self.log("info", f"checkpoint at step {step}: {path}")

    def status(self, status: RunStatus, detail: str = "") -> None:
        self.log("info", f"run {status}" + (f": {detail}" if detail else ""))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

"""JSONL reporter: one record per line, append-only, so a restarted run extends
the same file instead of truncating it (verl's file logger truncates)."""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path
from typing import Any

from trainer.reporting.base import RunStatus, SampleRecord


class JsonlReporter:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.handle = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - lives with self

    def _write(self, record: dict[str, Any]) -> None:
        record["time"] = time.time()
        self.handle.write(json.dumps(record, allow_nan=True) + "\n")
        self.handle.flush()

    def metrics(self, step: int, values: dict[str, float]) -> None:
        self._write({"type": "metrics", "step": step, "values": values})

    def samples(self, step: int, samples: list[SampleRecord]) -> None:
        if samples:
            self._write(
                {
                    "type": "samples",
                    "step": step,
                    "samples": [dataclasses.asdict(s) for s in samples],
                }
            )

    def log(self, level: str, message: str) -> None:
        self._write({"type": "log", "level": level, "message": message})

    def checkpoint(self, step: int, path: str) -> None:
        self._write({"type": "checkpoint", "step": step, "path": path})

    def status(self, status: RunStatus, detail: str = "") -> None:
        self._write({"type": "status", "status": status, "detail": detail})

    def progress(self, step: int, total: int) -> None:
        return None

    def close(self) -> None:
        if not self.handle.closed:
            self.handle.flush()
            os.fsync(self.handle.fileno())
            self.handle.close()


def read_records(path: str | Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]

"""The studio reporter: every record goes to the durable spool, then to the studio.

An emit (metrics, samples, log line, checkpoint notice, status) encodes the record,
gives it the next seq of this (run, attempt) and appends it to the spool; that is all
the training thread does. A background uploader sends the spool in batches (see
`trainer.reporting.upload`), so a step never waits on the network, and the studio
stores each (run, attempt, seq) once however often it is re-sent. The wire format is
docs/telemetry.md.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import time
from collections.abc import Iterator, Mapping
from typing import Any

from trainer.config.schema import LoggingConfig
from trainer.reporting.base import RunStatus, SampleRecord
from trainer.reporting.spool import Spool, SpoolError, SpoolPaths
from trainer.reporting.upload import (
    IngestClient,
    IngestTarget,
    TargetError,
    Uploader,
    UploadLimits,
)

log = logging.getLogger(__name__)

ENV_NAMES = ("RLSTUDIO_URL", "RLSTUDIO_RUN_ID", "RLSTUDIO_ATTEMPT", "RLSTUDIO_RUN_TOKEN")
MESSAGE_CHARS = 16_384  # a log line or status detail longer than this is cut (tail kept)
SAMPLES_RECORD_BYTES = 512 * 1024  # a step's samples are split into records about this big


def target_from_env(environ: Mapping[str, str] = os.environ) -> IngestTarget | None:
    """The studio to report to, from the launcher's environment; None when not launched
    by a studio. RLSTUDIO_URL alone does not count: the remote CLI uses it too."""
    present = {name: environ[name] for name in ENV_NAMES if environ.get(name)}
    if not present.keys() - {"RLSTUDIO_URL"}:
        return None
    missing = [name for name in ENV_NAMES if name not in present]
    if missing:
        raise TargetError(
            f"studio reporting needs all of {', '.join(ENV_NAMES)}; missing: {', '.join(missing)}"
        )
    try:
        attempt = int(present["RLSTUDIO_ATTEMPT"])
    except ValueError:
        raise TargetError(
            f"RLSTUDIO_ATTEMPT must be an integer >= 1, got {present['RLSTUDIO_ATTEMPT']!r}"
        ) from None
    return IngestTarget(
        url=present["RLSTUDIO_URL"],
        run_id=present["RLSTUDIO_RUN_ID"],
        attempt=attempt,
        token=present["RLSTUDIO_RUN_TOKEN"],
    )


def finite(value: Any) -> Any:
    """The value with every NaN/inf float (at any depth) replaced by None: JSON has no
    NaN, and the studio stores no non-finite metric."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def dumps(value: Any) -> bytes:
    # ASCII-only: no raw newline can end up inside a spool line, and bytes are UTF-8-safe.
    return json.dumps(value, separators=(",", ":"), allow_nan=False).encode("ascii")


def encode_record(kind: str, data: Mapping[str, Any], at: float | None = None) -> bytes:
    """A record as the studio receives it, minus the seq the spool adds."""
    return dumps({"kind": kind, "time": time.time() if at is None else at, "data": finite(data)})


def tail(text: str, limit: int = MESSAGE_CHARS) -> str:
    return text if len(text) <= limit else "[...] " + text[-limit:]


def sample_records(step: int, samples: list[SampleRecord], at: float) -> Iterator[bytes]:
    """One step's samples as records of about SAMPLES_RECORD_BYTES each, so no record
    nears the studio's request limit however many samples a validation stores."""
    head = b'{"kind":"samples","time":%s,"data":{"step":%d,"samples":[' % (dumps(at), step)
    chunk: list[bytes] = []
    size = 0
    for sample in samples:
        encoded = dumps(finite(dataclasses.asdict(sample)))
        if chunk and size + len(encoded) > SAMPLES_RECORD_BYTES:
            yield head + b",".join(chunk) + b"]}}"
            chunk, size = [], 0
        chunk.append(encoded)
        size += len(encoded) + 1
    if chunk:
        yield head + b",".join(chunk) + b"]}}"


class StudioReporter:
    """Reporter that spools every record durably and uploads it in the background."""

    def __init__(
        self,
        target: IngestTarget,
        cfg: LoggingConfig,
        client: IngestClient | None = None,
        limits: UploadLimits | None = None,
    ) -> None:
        self.target = target
        self.cfg = cfg
        self.spool = Spool(
            SpoolPaths.for_attempt(cfg.spool_dir, target.run_id, target.attempt),
            fsync=cfg.spool_fsync,
        )
        unsent = self.spool.next_seq - 1 - self.spool.acked_through
        if unsent:
            log.info(
                "spool %s holds %d records not yet acknowledged; sending them first",
                self.spool.paths.data,
                unsent,
            )
        self.uploader = Uploader(
            self.spool,
            client or IngestClient(target),
            limits or UploadLimits.from_config(cfg),
        )
        self.uploader.start()
        self.dropped = 0  # records that could not even be spooled (disk full, ...)
        self.closed = False

    def _append(self, record: bytes) -> None:
        if self.closed:
            log.warning("studio reporter is closed; a record was not spooled")
            return
        try:
            self.spool.append(record)
        except (OSError, SpoolError) as exc:
            # Telemetry must not kill training: count and say it, loudly but not per record.
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 1000 == 0:
                log.error("cannot spool a record (%d lost so far): %s", self.dropped, exc)

    def metrics(self, step: int, values: dict[str, float]) -> None:
        self._append(encode_record("metrics", {"step": step, "values": values}))

    def samples(self, step: int, samples: list[SampleRecord]) -> None:
        for record in sample_records(step, samples, time.time()):
            self._append(record)

    def log(self, level: str, message: str) -> None:
        self._append(encode_record("log", {"level": level, "message": tail(message)}))

    def checkpoint(self, step: int, path: str) -> None:
        self._append(encode_record("checkpoint", {"step": step, "path": path}))

    def status(self, status: RunStatus, detail: str = "") -> None:
        self._append(encode_record("status", {"status": status, "detail": tail(detail)}))

    def startup(self, phases: dict[str, float]) -> None:
        """Startup timeline marks (trainer.reporting.startup), sent as they are made."""
        self._append(encode_record("startup", {"phases": phases}))

    def progress(self, step: int, total: int) -> None:
        return None  # the studio derives progress from metrics steps and the run config

    def flush(self, timeout: float) -> bool:
        """Wait (at most `timeout`) until everything emitted so far is acknowledged."""
        self.spool.sync()
        return self.uploader.wait_until_acked(self.spool.next_seq - 1, timeout)

    def close(self, timeout: float | None = None) -> None:
        """Send what is left for at most `timeout` seconds (`logging.flush_timeout_s`),
        then stop. Whatever was not sent stays in the spool; never hangs."""
        if self.closed:
            return
        self.closed = True
        limit = self.cfg.flush_timeout_s if timeout is None else timeout
        deadline = time.monotonic() + limit
        # Making the spool durable counts against the same limit (an fsync on a busy disk
        # may take a while; `sync` alone would wait up to 5 s on top of the limit).
        self.spool.sync(timeout=limit)
        drained = self.uploader.finish(max(0.0, deadline - time.monotonic()))
        if self.uploader.alive:
            # Stuck past its deadline (e.g. name resolution ignores timeouts): leave the
            # files open rather than pull them from under it; the process exit frees them.
            log.warning("studio uploader did not stop in %.1fs; leaving it", limit)
            return
        left = self.spool.next_seq - 1 - self.spool.acked_through
        self.spool.close()
        if not drained and left:
            log.warning(
                "%d records were not sent to the studio (%s); they stay in %s: "
                "`python -m trainer spool-send --spool-dir %s` sends them",
                left,
                self.uploader.stats.refused or "time limit reached",
                self.spool.paths.data,
                self.cfg.spool_dir,
            )

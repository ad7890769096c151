"""The `logging` section of the run config: console, JSONL, stored samples, and the
studio reporter's spool and uploads."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from trainer.config.paths import RunFolderPath
from trainer.config.section import Section


class LoggingConfig(Section):
    console: bool = Field(True, description="Progress bar and a line of key metrics.")
    jsonl_path: RunFolderPath | None = Field(
        None, description="Append-only JSONL of every record; empty disables it."
    )
    samples_per_step: int = Field(
        16,
        ge=0,
        le=4096,
        description="Training rollout samples stored per step, as whole GRPO groups: the "
        "best and worst groups (by mean score) always, then groups with reward errors, then "
        "random groups (seeded) until this many samples. 0 stores none.",
    )
    token_data_fraction: float = Field(
        0.25,
        ge=0.0,
        le=1.0,
        description="Fraction of stored samples (train and validation) that carry per-token "
        "data: token texts and ids, sampling log-probs, and advantages (training). Chosen "
        "with a seeded generator, so a rerun picks the same ones.",
    )
    val_samples_cap: int = Field(
        4096,
        ge=0,
        description="At most this many validation samples are stored per validation (all of "
        "them when fewer; `data.max_val_samples` * `rollout.val_n` is the total).",
    )
    spool_dir: RunFolderPath = Field(
        "var/spool",
        description="Studio reporter: where every record is written (one file per run "
        "attempt, fsync'd) before it is uploaded; what could not be sent stays here.",
    )
    spool_fsync: Literal["group", "record"] = Field(
        "group",
        description="`group`: a background thread fsyncs the spool right behind the writes "
        "(emits during one fsync share the next), so a step never waits on the disk; "
        "`record`: every emit waits for its own fsync.",
    )
    upload_batch_records: int = Field(
        500, ge=1, le=2000, description="Studio reporter: records per upload request, at most."
    )
    upload_batch_bytes: int = Field(
        1 << 20,
        ge=1024,
        le=7 << 20,
        description="Studio reporter: bytes of records per upload request, at most (a single "
        "larger record goes alone; the studio accepts 8 MiB).",
    )
    upload_timeout_s: float = Field(
        10.0, gt=0.0, le=300.0, description="Studio reporter: timeout of one upload request."
    )
    upload_max_backoff_s: float = Field(
        30.0,
        gt=0.0,
        le=3600.0,
        description="Studio reporter: longest wait between retries while the studio is "
        "unreachable (exponential back-off with jitter, from 0.5 s).",
    )
    flush_timeout_s: float = Field(
        10.0,
        ge=0.0,
        le=3600.0,
        description="Studio reporter: at the end of a run, how long to keep sending; "
        "the rest stays in the spool for `python -m trainer spool-send`.",
    )
    cancel_flush_timeout_s: float = Field(
        2.0,
        ge=0.0,
        le=3600.0,
        description="Like `flush_timeout_s`, after SIGTERM (a cancelled run). Ray sends "
        "SIGKILL 3 s after SIGTERM (RAY_JOB_STOP_WAIT_TIME_S), so keep it below that.",
    )

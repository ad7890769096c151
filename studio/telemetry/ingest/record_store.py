"""Storing a batch of trainer records: idempotent, all-or-nothing, then fanned out live.

One transaction per request:
1. the ledger (`IngestedRecord`) takes every record with `ON CONFLICT DO NOTHING` and
   returns the seqs it did not have: only those are "fresh"; the rest are duplicates
   of earlier uploads (retries) and are not written again;
2. the first records of a resumed attempt supersede what earlier attempts reported past
   the resume step (studio.telemetry.ingest.superseding);
3. the fresh records' content goes into its tables, one multi-row statement per table;
4. alerts are evaluated on the new metric steps (studio.telemetry.alerts.rules);
5. status records drive the run through `lifecycle.transition` (status_records.py);
6. startup records, and the attempt's first metric row, mark its startup timeline
   (studio.runs.startup).
After the commit, the fresh records' events are published to the run's channel.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any

import psycopg
from django.db import connection, transaction
from django.db.models import Max
from django.utils import timezone
from psycopg.types.json import Jsonb

from studio.projects import notify
from studio.runs import lifecycle, run_files, startup
from studio.runs.models import Checkpoint, Run, RunAttempt
from studio.telemetry.alerts.rules import COMPONENT_PREFIX, WATCHED
from studio.telemetry.alerts.store import raise_alerts
from studio.telemetry.ingest.records import (
    CheckpointRecord,
    IngestBatch,
    LogRecord,
    MetricsRecord,
    Record,
    SamplesRecord,
    StartupRecord,
    StatusRecord,
)
from studio.telemetry.ingest.status_records import apply_status
from studio.telemetry.ingest.superseding import resume_step_of, supersede_earlier_attempts
from studio.telemetry.live import pubsub
from studio.telemetry.live import sse_frames as frames
from studio.telemetry.live.sse_frames import EventKey
from studio.telemetry.models import IngestedRecord, LogLine, RunAlert

Event = tuple[EventKey, bytes]


@dataclass(frozen=True)
class Outcome:
    stored: int
    duplicates: int
    last_seq: int | None


def store_batch(run: Run, attempt: RunAttempt, batch: IngestBatch) -> Outcome:
    """Store what is new in `batch` for `attempt` of `run` (the caller checked that the
    token allows exactly this)."""
    unique: dict[int, Record] = {}
    for record in batch.records:
        unique.setdefault(record.seq, record)  # a seq repeated in one request: first wins
    records = sorted(unique.values(), key=lambda r: r.seq)
    number = attempt.number
    with transaction.atomic():
        resuming = (
            number > 1
            and bool(records)
            and not IngestedRecord.objects.filter(run_id=run.pk, attempt=number).exists()
        )
        fresh_seqs = _insert_ledger(run.pk, number, records)
        fresh = [r for r in records if r.seq in fresh_seqs]
        if resuming and fresh:
            supersede_earlier_attempts(run.pk, number, resume_step_of(attempt))
        writer = _Writer(run, number)
        for record in fresh:
            writer.add(record)
        published = writer.write()
        _mark_startup(attempt, writer)
        messages = [
            (pubsub.run_channel(run.pk), pubsub.message(frames.key_bytes(key), frame))
            for key, frame in sorted(published, key=lambda event: event[0])
        ]
        transaction.on_commit(partial(pubsub.publish, messages), robust=True)
        for record in fresh:
            if isinstance(record, StatusRecord):
                apply_status(run.pk, attempt, record)
        last_seq = IngestedRecord.objects.filter(run_id=run.pk, attempt=number).aggregate(
            last=Max("seq")
        )["last"]
    return Outcome(len(fresh), len(batch.records) - len(fresh), last_seq)


def _insert_ledger(run_id: int, attempt: int, records: Sequence[Record]) -> set[int]:
    if not records:
        return set()
    seqs: list[int] = []
    kinds: list[str] = []
    steps: list[int | None] = []
    times: list[float] = []
    data: list[str | None] = []
    for r in records:
        seqs.append(r.seq)
        kinds.append(r.kind)
        times.append(r.time)
        if isinstance(r, StatusRecord):
            steps.append(None)
            data.append(json.dumps({"status": r.data.status, "detail": r.data.detail}))
        elif isinstance(r, StartupRecord):
            steps.append(None)
            data.append(json.dumps({"phases": r.data.phases}))
        elif isinstance(r, CheckpointRecord):
            steps.append(r.data.step)
            data.append(json.dumps({"step": r.data.step, "path": r.data.path}))
        else:
            steps.append(None if isinstance(r, LogRecord) else r.data.step)
            data.append(None)
    rows = _bulk(
        "INSERT INTO telemetry_ingestedrecord "
        "(run_id, attempt, seq, kind, step, emitted_at, received_at, data, superseded) "
        "SELECT %b, %b, r.seq, r.kind, r.step, r.emitted_at, %b, r.data::jsonb, false "
        "FROM unnest(%b::bigint[], %b::text[], %b::integer[], %b::float8[], %b::text[]) "
        "AS r(seq, kind, step, emitted_at, data) "
        "ON CONFLICT DO NOTHING RETURNING seq",
        [run_id, attempt, timezone.now(), seqs, kinds, steps, times, data],
    )
    return {seq for (seq,) in rows}


def _insert_fresh(query: str, params: Sequence[Any], returning: str = "") -> list[tuple[Any, ...]]:
    """Insert the content of fresh records (seqs the ledger did not have).

    Ingest never writes a seq twice, so a plain INSERT is enough, and 30-40% faster than
    `ON CONFLICT DO NOTHING` (no speculative insertion). Rows under the same key written
    by something else (a data import, a test) would make it fail: then the statement is
    repeated, skipping them, after rolling back to a savepoint.
    """
    try:
        with transaction.atomic():
            return _bulk(f"{query} {returning}", params)
    except psycopg.errors.UniqueViolation:
        return _bulk(f"{query} ON CONFLICT DO NOTHING {returning}", params)


def _bulk(query: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    """Run one multi-row statement with server-side, binary parameters.

    Django's psycopg cursors bind client-side: a 20,000-element array would be quoted
    into the SQL text element by element (about 2.5x slower here). A plain psycopg
    cursor on the same connection (so inside the same transaction) sends the arrays as
    binary parameters instead.
    """
    connection.ensure_connection()
    with psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(query, params)
        return cursor.fetchall() if cursor.description else []


def _mark_startup(attempt: RunAttempt, writer: _Writer) -> None:
    """The trainer's phases, and the attempt's first stored metric row (its record's emit
    time and now), on the attempt's startup timeline; repeats change nothing."""
    for record in writer.startups:
        startup.record(attempt.pk, record.data.phases)
    first = next((r for r in writer.metrics if r.data.finite_values()), None)
    if first is not None:
        startup.metric_stored(attempt, first.time)


def _watched_for_alerts(key: str) -> bool:
    return key in WATCHED or key.startswith(COMPONENT_PREFIX)


class _Writer:
    """Collects fresh records per table, writes each table in one statement and returns
    the records' events (samples need their new ids, so events are built after)."""

    def __init__(self, run: Run, attempt: int) -> None:
        self.run = run
        self.attempt = attempt
        self.metrics: list[MetricsRecord] = []
        self.samples: list[SamplesRecord] = []
        self.logs: list[LogRecord] = []
        self.startups: list[StartupRecord] = []
        self.others: list[StatusRecord | CheckpointRecord | StartupRecord] = []

    def add(self, record: Record) -> None:
        if isinstance(record, MetricsRecord):
            self.metrics.append(record)
        elif isinstance(record, SamplesRecord):
            self.samples.append(record)
        elif isinstance(record, LogRecord):
            self.logs.append(record)
        else:
            if isinstance(record, StartupRecord):
                self.startups.append(record)
            self.others.append(record)

    def write(self) -> list[Event]:
        published = self._write_metrics() + self._write_samples() + self._write_logs()
        checkpoints = [r for r in self.others if isinstance(r, CheckpointRecord)]
        if checkpoints:
            Checkpoint.objects.bulk_create(
                [
                    Checkpoint(
                        run=self.run,
                        attempt=self.attempt,
                        step=r.data.step,
                        uri=r.data.path,
                        created_at=_datetime(r.time),
                    )
                    for r in checkpoints
                ],
                ignore_conflicts=True,
            )
            # What the run's folder takes now, for its project's storage (studio.runs.quota).
            run_id = self.run.pk
            transaction.on_commit(lambda: run_files.measure(run_id))
        for r in self.others:
            data = r.data.model_dump()
            published.append(frames.stored_record_event(self.attempt, r.seq, r.time, r.kind, data))
        return published

    def _write_metrics(self) -> list[Event]:
        if not self.metrics:
            return []
        seqs, steps, keys, values = [], [], [], []
        published: list[Event] = []
        alert_steps: dict[int, int] = {}  # step -> seq of the latest record carrying it
        for r in self.metrics:
            finite = r.data.finite_values()
            for key, value in finite.items():
                seqs.append(r.seq)
                steps.append(r.data.step)
                keys.append(key)
                values.append(value)
            if any(_watched_for_alerts(key) for key in finite):
                alert_steps[r.data.step] = max(r.seq, alert_steps.get(r.data.step, -1))
            published.append(frames.metrics_event(self.attempt, r.seq, r.time, r.data.step, finite))
        if keys:
            _insert_fresh(
                "INSERT INTO telemetry_metricpoint "
                "(run_id, attempt, seq, step, key, value, superseded) "
                "SELECT %b, %b, p.seq, p.step, p.key, p.value, false "
                "FROM unnest(%b::bigint[], %b::integer[], %b::text[], %b::float8[]) "
                "AS p(seq, step, key, value)",
                [self.run.pk, self.attempt, seqs, steps, keys, values],
            )
        by_seq: dict[int, list[dict[str, Any]]] = {}
        for seq, alert in raise_alerts(self.run.pk, self.attempt, alert_steps):
            if alert.severity == "critical":
                _notify_first_critical(self.run.pk, alert)
            by_seq.setdefault(seq, []).append(
                frames.alert_payload(
                    alert.kind, alert.step, alert.severity, alert.message, alert.values
                )
            )
        for seq, payloads in by_seq.items():
            payloads.sort(key=lambda p: (p["step"], p["kind"]))  # the order replay uses
            published.append(frames.alerts_event(self.attempt, seq, payloads))
        return published

    def _write_samples(self) -> list[Event]:
        if not self.samples:
            return []
        columns: dict[str, list[Any]] = {name: [] for name, _ in _SAMPLE_COLUMNS}
        for r in self.samples:
            for position, s in enumerate(r.data.samples):
                row = {
                    "seq": r.seq,
                    "position": position,
                    "step": s.step,
                    "split": s.split,
                    "group_id": s.group_id,
                    "data_source": s.data_source,
                    "prompt": s.prompt,
                    "response": s.response,
                    "ground_truth": s.ground_truth,
                    "score": _number(s.score),
                    "components": Jsonb({k: frames.finite(v) for k, v in s.components.items()}),
                    "reward_extra": Jsonb(s.reward_extra),
                    "advantage": _number(s.advantage),
                    "prompt_length": s.prompt_length,
                    "response_length": s.response_length,
                    "finish_reason": s.finish_reason,
                    "error": s.error,
                    "token_data": None if s.token_data is None else Jsonb(_json_safe_series(s)),
                    "turns": None if s.turns is None else Jsonb(s.stored_turns()),
                    "num_turns": len(s.turns or ()),
                    "source_row": s.row,
                    "created_at": _datetime(r.time),
                }
                for name, _ in _SAMPLE_COLUMNS:
                    columns[name].append(row[name])
        ids: dict[tuple[int, int], int] = {}
        if columns["seq"]:
            names = ", ".join(name for name, _ in _SAMPLE_COLUMNS)
            arrays = ", ".join(f"%b::{sql_type}[]" for _, sql_type in _SAMPLE_COLUMNS)
            rows = _insert_fresh(
                f"INSERT INTO telemetry_rolloutsample (run_id, attempt, reward_version_id, "
                f"superseded, {names}) SELECT %b, %b, %b, false, s.* "
                f"FROM unnest({arrays}) AS s({names})",
                [
                    self.run.pk,
                    self.attempt,
                    self.run.reward_version_id,
                    *(columns[name] for name, _ in _SAMPLE_COLUMNS),
                ],
                returning="RETURNING id, seq, position",
            )
            ids = {(seq, position): pk for pk, seq, position in rows}
        published: list[Event] = []
        for r in self.samples:
            summaries = [
                frames.sample_summary(
                    ids[(r.seq, position)],
                    s.group_id,
                    s.split,
                    s.score,
                    s.advantage,
                    s.prompt_length,
                    s.response_length,
                    s.finish_reason,
                    {k: frames.finite(v) for k, v in s.components.items()},
                    s.response[: frames.PREVIEW_CHARS],
                    s.error[: frames.PREVIEW_CHARS],
                    len(s.turns or ()),
                )
                for position, s in enumerate(r.data.samples)
                if (r.seq, position) in ids
            ]
            published.append(
                frames.samples_event(self.attempt, r.seq, r.time, r.data.step, summaries)
            )
        return published

    def _write_logs(self) -> list[Event]:
        if not self.logs:
            return []
        LogLine.objects.bulk_create(
            [
                LogLine(
                    run=self.run,
                    attempt=self.attempt,
                    seq=r.seq,
                    level=r.data.level,
                    message=r.data.message,
                    at=_datetime(r.time),
                )
                for r in self.logs
            ],
            ignore_conflicts=True,
        )
        return [
            frames.log_event(self.attempt, r.seq, r.time, r.data.level, r.data.message)
            for r in self.logs
        ]


# Column -> Postgres array element type, for the one-statement unnest insert of samples.
_SAMPLE_COLUMNS = (
    ("seq", "bigint"),
    ("position", "integer"),
    ("step", "integer"),
    ("split", "text"),
    ("group_id", "text"),
    ("data_source", "text"),
    ("prompt", "text"),
    ("response", "text"),
    ("ground_truth", "text"),
    ("score", "float8"),
    ("components", "jsonb"),
    ("reward_extra", "jsonb"),
    ("advantage", "float8"),
    ("prompt_length", "integer"),
    ("response_length", "integer"),
    ("finish_reason", "text"),
    ("error", "text"),
    ("token_data", "jsonb"),
    ("turns", "jsonb"),
    ("num_turns", "integer"),
    ("source_row", "integer"),
    ("created_at", "timestamptz"),
)


def _notify_first_critical(run_id: int, alert: Any) -> None:
    """Tell the project's webhook and members about a run's first critical alert of a
    kind (later steps of the same trouble are on the run's Alerts tab, not in inboxes)."""
    if RunAlert.objects.filter(run_id=run_id, kind=alert.kind, severity="critical").count() <= 1:
        notify.critical_alert(
            lifecycle.notice_subject(run_id), alert.kind, alert.step, alert.message
        )


def _number(value: float | None) -> float:
    """Sample scores are NOT NULL columns: a missing or non-finite one is stored as NaN
    (the API shows it as null)."""
    return float("nan") if value is None else value


def _json_safe_series(sample: Any) -> dict[str, list[Any]]:
    """jsonb has no NaN or infinity: those become null."""
    return {
        k: [frames.finite(v) if isinstance(v, float) else v for v in series]
        for k, series in sample.token_data.items()
    }


def _datetime(unix_seconds: float) -> datetime:
    return datetime.fromtimestamp(unix_seconds, tz=UTC)

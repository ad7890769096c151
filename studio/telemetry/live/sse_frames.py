"""Server-Sent-Event frames of a run's telemetry, live and replayed from the database.

One record is one event whose id is `"{attempt}:{seq}"`; the alerts a metrics record
raised follow it as one `alert` event with id `"{attempt}:{seq}:alert"`. Streams order
and de-duplicate by the key (attempt, seq, rank), rank 0 for the record and 1 for its
alerts. Live events (built from the request at ingest) and replayed ones (built from
the stored rows) carry the same payloads; docs/telemetry.md lists them.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import Q
from django.db.models.functions import Left

from studio.telemetry.alerts.evidence import evidence_of
from studio.telemetry.models import (
    IngestedRecord,
    LogLine,
    MetricPoint,
    RecordKind,
    RolloutSample,
    RunAlert,
)

PREVIEW_CHARS = 300  # of a sample's response (and error) carried by live events
EventKey = tuple[int, int, int]  # (attempt, seq, rank)
RECORD, ALERTS = 0, 1
BEFORE_EVERYTHING: EventKey = (0, 0, ALERTS)  # "0:0:alert": every record comes after it
_LAST_EVENT_ID = re.compile(r"^(\d{1,9}):(\d{1,19})(:alert)?$")


class BadEventId(ValueError):
    pass


def event_id(key: EventKey) -> str:
    attempt, seq, rank = key
    return f"{attempt}:{seq}:alert" if rank == ALERTS else f"{attempt}:{seq}"


def parse_event_id(text: str) -> EventKey:
    match = _LAST_EVENT_ID.match(text.strip())
    if match is None:
        raise BadEventId(
            f"{text[:40]!r} is not an event id; expected 'attempt:seq' or "
            "'attempt:seq:alert' as sent in the stream's `id:` lines"
        )
    return int(match[1]), int(match[2]), ALERTS if match[3] else RECORD


def key_bytes(key: EventKey) -> bytes:
    return b"%d:%d:%d" % key


def parse_key_bytes(raw: bytes) -> EventKey:
    attempt, seq, rank = raw.split(b":")
    return int(attempt), int(seq), int(rank)


def frame(event: str, data: dict[str, Any], id: str | None = None) -> bytes:
    """One SSE event. JSON never contains a raw newline, so `data` is one line."""
    head = f"id: {id}\n" if id is not None else ""
    body = json.dumps(data, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    return f"{head}event: {event}\ndata: {body}\n\n".encode()


def comment(text: str) -> bytes:
    return f": {text}\n\n".encode()


def finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


# --- payloads (the same for live and replayed events) ---------------------------------


def metrics_event(
    attempt: int, seq: int, time: float, step: int, values: dict[str, float]
) -> tuple[EventKey, bytes]:
    key = (attempt, seq, RECORD)
    data = {"attempt": attempt, "seq": seq, "time": time, "step": step, "values": values}
    return key, frame("metrics", data, event_id(key))


def sample_summary(
    id: int,
    group_id: str,
    split: str,
    score: float | None,
    advantage: float | None,
    prompt_length: int,
    response_length: int,
    finish_reason: str,
    components: dict[str, Any],
    response_preview: str,
    error_preview: str,
    num_turns: int,
) -> dict[str, Any]:
    return {
        "id": id,
        "group_id": group_id,
        "split": split,
        "score": finite(score),
        "advantage": finite(advantage),
        "prompt_length": prompt_length,
        "response_length": response_length,
        "finish_reason": finish_reason,
        "components": components,
        "response_preview": response_preview,
        "error": error_preview,
        "num_turns": num_turns,  # 0: single-turn; the turns are in GET /api/samples/{id}/
    }


def samples_event(
    attempt: int, seq: int, time: float, step: int, samples: list[dict[str, Any]]
) -> tuple[EventKey, bytes]:
    key = (attempt, seq, RECORD)
    data = {"attempt": attempt, "seq": seq, "time": time, "step": step, "samples": samples}
    return key, frame("samples", data, event_id(key))


def log_event(
    attempt: int, seq: int, time: float, level: str, message: str
) -> tuple[EventKey, bytes]:
    key = (attempt, seq, RECORD)
    data = {"attempt": attempt, "seq": seq, "time": time, "level": level, "message": message}
    return key, frame("log", data, event_id(key))


def stored_record_event(
    attempt: int, seq: int, time: float, kind: str, data: dict[str, Any]
) -> tuple[EventKey, bytes]:
    """Status and checkpoint records: their data as the trainer sent it."""
    key = (attempt, seq, RECORD)
    return key, frame(kind, {"attempt": attempt, "seq": seq, "time": time, **data}, event_id(key))


def alerts_event(attempt: int, seq: int, alerts: list[dict[str, Any]]) -> tuple[EventKey, bytes]:
    key = (attempt, seq, ALERTS)
    data = {"attempt": attempt, "seq": seq, "alerts": alerts}
    return key, frame("alert", data, event_id(key))


def alert_payload(
    kind: str, step: int, severity: str, message: str, values: dict[str, Any]
) -> dict[str, Any]:
    return {
        "kind": kind,
        "step": step,
        "severity": severity,
        "message": message,
        "values": values,
        "evidence": evidence_of(kind, step, values),
    }


# --- replay from the database ---------------------------------------------------------


@dataclass(frozen=True)
class _Ledger:
    attempt: int
    seq: int
    kind: str
    step: int | None
    time: float
    data: Any


def _after(key: EventKey) -> Q:
    attempt, seq, _ = key
    return Q(attempt__gt=attempt) | Q(attempt=attempt, seq__gt=seq)


def _in_records(keys: Iterable[tuple[int, int]]) -> Q:
    by_attempt: dict[int, list[int]] = defaultdict(list)
    for attempt, seq in keys:
        by_attempt[attempt].append(seq)
    condition = Q(pk__in=[])
    for attempt, seqs in by_attempt.items():
        condition |= Q(attempt=attempt, seq__in=seqs)
    return condition


def replay(run_id: int, after: EventKey, limit: int) -> list[tuple[EventKey, bytes]]:
    """The stored events after `after`, in order: at most `limit` records (with their
    alerts). Superseded records are left out: a later attempt replaced them."""
    rows = [
        _Ledger(*row)
        for row in IngestedRecord.objects.filter(_after(after), run_id=run_id, superseded=False)
        .order_by("attempt", "seq")
        .values_list("attempt", "seq", "kind", "step", "emitted_at", "data")[:limit]
    ]
    # After a record's own event, its alerts are still to come.
    pending_alerts = [(after[0], after[1])] if after[2] == RECORD else []
    alerts = _alerts(run_id, [(r.attempt, r.seq) for r in rows] + pending_alerts)
    events: list[tuple[EventKey, bytes]] = []
    if pending_alerts and pending_alerts[0] in alerts:
        events.append(alerts_event(*pending_alerts[0], alerts[pending_alerts[0]]))
    metrics = _metric_values(run_id, [r for r in rows if r.kind == RecordKind.METRICS])
    samples = _samples(run_id, [r for r in rows if r.kind == RecordKind.SAMPLES])
    logs = _logs(run_id, [r for r in rows if r.kind == RecordKind.LOG])
    for r in rows:
        ref = (r.attempt, r.seq)
        if r.kind == RecordKind.METRICS:
            events.append(metrics_event(r.attempt, r.seq, r.time, r.step or 0, metrics[ref]))
        elif r.kind == RecordKind.SAMPLES:
            events.append(samples_event(r.attempt, r.seq, r.time, r.step or 0, samples[ref]))
        elif r.kind == RecordKind.LOG:
            level, message = logs.get(ref, ("info", ""))
            events.append(log_event(r.attempt, r.seq, r.time, level, message))
        else:
            events.append(stored_record_event(r.attempt, r.seq, r.time, r.kind, r.data or {}))
        if ref in alerts:
            events.append(alerts_event(r.attempt, r.seq, alerts[ref]))
    return events


def last_key(run_id: int) -> EventKey:
    """The key of the run's latest stored record (or one before everything)."""
    row = (
        IngestedRecord.objects.filter(run_id=run_id)
        .order_by("-attempt", "-seq")
        .values_list("attempt", "seq")
        .first()
    )
    if row is None:
        return BEFORE_EVERYTHING
    # Its alerts were raised in the same transaction: "from now" starts after them too.
    return row[0], row[1], ALERTS


def _metric_values(run_id: int, rows: Sequence[_Ledger]) -> dict[tuple[int, int], dict[str, float]]:
    values: dict[tuple[int, int], dict[str, float]] = {(r.attempt, r.seq): {} for r in rows}
    if rows:
        points = MetricPoint.objects.filter(
            _in_records((r.attempt, r.seq) for r in rows), run_id=run_id
        ).values_list("attempt", "seq", "key", "value")
        for attempt, seq, key, value in points:
            values[(attempt, seq)][key] = value
    return values


def _samples(run_id: int, rows: Sequence[_Ledger]) -> dict[tuple[int, int], list[dict[str, Any]]]:
    found: dict[tuple[int, int], list[dict[str, Any]]] = {(r.attempt, r.seq): [] for r in rows}
    if not rows:
        return found
    samples = (
        RolloutSample.objects.filter(_in_records((r.attempt, r.seq) for r in rows), run_id=run_id)
        .annotate(
            preview=Left("response", PREVIEW_CHARS), error_preview=Left("error", PREVIEW_CHARS)
        )
        .order_by("attempt", "seq", "position")
        .values_list(
            "attempt",
            "seq",
            "id",
            "group_id",
            "split",
            "score",
            "advantage",
            "prompt_length",
            "response_length",
            "finish_reason",
            "components",
            "preview",
            "error_preview",
            "num_turns",
        )
    )
    for attempt, seq, *fields in samples:
        found[(attempt, seq)].append(sample_summary(*fields))
    return found


def _logs(run_id: int, rows: Sequence[_Ledger]) -> dict[tuple[int, int], tuple[str, str]]:
    if not rows:
        return {}
    lines = LogLine.objects.filter(
        _in_records((r.attempt, r.seq) for r in rows), run_id=run_id
    ).values_list("attempt", "seq", "level", "message")
    return {(attempt, seq): (level, message) for attempt, seq, level, message in lines}


def _alerts(
    run_id: int, refs: Sequence[tuple[int, int]]
) -> dict[tuple[int, int], list[dict[str, Any]]]:
    if not refs:
        return {}
    found: dict[tuple[int, int], list[dict[str, Any]]] = defaultdict(list)
    alerts = (
        RunAlert.objects.filter(_in_records(refs), run_id=run_id)
        .order_by("attempt", "seq", "step", "kind")
        .values_list("attempt", "seq", "kind", "step", "severity", "message", "values")
    )
    for attempt, seq, *fields in alerts:
        found[(attempt, seq)].append(alert_payload(*fields))
    return dict(found)

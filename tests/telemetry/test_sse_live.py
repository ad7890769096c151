"""Live streams over a real uvicorn server (ASGI), Postgres and Redis: delivery, heartbeats,
and resume after forced disconnects while records are being ingested."""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from studio.telemetry.alerts.rules import REWARD_ERROR_RATE
from studio.telemetry.live.sse_frames import parse_event_id
from studio.telemetry.models import IngestedRecord, RunAlert
from tests.live import LiveProcess, start_web_server
from tests.telemetry.conftest import Lab, Trainer, log, make_lab, metrics, samples, status
from tests.telemetry.sse import Event, Stream

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def web(django_db_setup: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveProcess]:
    server = start_web_server(
        tmp_path_factory.mktemp("web"), RLSTUDIO_SSE_HEARTBEAT_S="0.5", LOG_LEVEL="WARNING"
    )
    yield server
    server.stop()


def personal_token(lab: Lab, who: str = "viewer") -> dict[str, str]:
    from studio.projects.models import ApiToken

    _, raw = ApiToken.issue(getattr(lab, who), "stream")
    return {"Authorization": f"Bearer {raw}"}


def post(web: LiveProcess, trainer: Trainer, records: list[dict]) -> dict:
    response = requests.post(
        f"{web.info['url']}/api/ingest/runs/{trainer.run.pk}/records",
        data=json.dumps({"attempt": trainer.attempt.number, "records": records}),
        headers={"Authorization": f"Bearer {trainer.token}", "Content-Type": "application/json"},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


def open_stream(web: LiveProcess, path: str, headers: dict[str, str]) -> Stream:
    stream = Stream(web.info["url"], path, headers)
    assert stream.status == 200, stream.response.read()[:300]
    return stream


def test_events_arrive_live(web: LiveProcess) -> None:
    lab = make_lab()
    trainer = lab.start_attempt(lab.new_run())
    stream = open_stream(web, f"/api/runs/{trainer.run.pk}/events", personal_token(lab))
    project = open_stream(web, "/api/projects/alpha/events", personal_token(lab, "owner"))
    snapshot, ready = stream.next(), stream.next()
    assert snapshot and snapshot.event == "run-status" and snapshot.data["status"] == "starting"
    assert ready and (ready.event, ready.id) == ("ready", "0:0:alert")
    project_ready = project.next()  # not a walrus inside assert: pytest 8 rewrites it away
    assert project_ready and project_ready.event == "ready"

    sent = time.time()
    post(web, trainer, [status(0, "running"), metrics(1, 1, {REWARD_ERROR_RATE: 0.5}), log(2)])
    received: list[Event] = []
    while len(received) < 5:
        event = stream.next()
        assert event is not None
        received.append(event)
    latency = time.time() - sent
    assert sorted((e.event, e.id) for e in received) == [
        ("alert", "1:1:alert"),
        ("log", "1:2"),
        ("metrics", "1:1"),
        ("run-status", None),  # the studio moved the run: starting -> running
        ("status", "1:0"),
    ]
    ids = [e.id for e in received if e.id]
    assert ids == sorted(ids, key=parse_event_id)
    assert latency < 5, latency
    change = project.next()
    assert change and change.event == "run-status" and change.data["status"] == "running"
    assert int(change.id or 0) > int(project_ready.id or 0)

    time.sleep(1.2)  # idle: heartbeats keep the stream alive
    post(web, trainer, [log(3, "later")])
    event = stream.next()
    assert event and event.id == "1:3"
    assert "heartbeat" in stream.comments
    stream.cut()
    project.cut()


def ingest_in_background(
    web: LiveProcess, trainer: Trainer, stop: threading.Event
) -> threading.Thread:
    """A trainer's uploads until `stop`: small batches of every kind, some raising alerts."""

    def upload() -> None:
        seq = 1
        while not stop.is_set():
            records = []
            for _ in range(4):
                step = seq
                rate = 0.5 if step % 7 == 0 else 0.0  # an alert now and then (cooldown permitting)
                records += [
                    metrics(seq, step, {"critic/score/mean": step / 100, REWARD_ERROR_RATE: rate}),
                    samples(seq + 1, step),
                    log(seq + 2, f"step {step}"),
                ]
                seq += 3
            post(web, trainer, records)
            stop.wait(random.uniform(0.0, 0.05))

    thread = threading.Thread(target=upload, name="uploads", daemon=True)
    thread.start()
    return thread


def test_fifty_forced_disconnects_lose_and_repeat_nothing(web: LiveProcess) -> None:
    lab = make_lab()
    trainer = lab.start_attempt(lab.new_run())
    post(web, trainer, [status(0, "running")])
    headers = personal_token(lab)
    path = f"/api/runs/{trainer.run.pk}/events"
    stop = threading.Event()
    uploads = ingest_in_background(web, trainer, stop)
    rng = random.Random(6)
    seen: list[str] = []
    last_id = "0:0"
    try:
        for reconnect in range(51):  # the first connect and 50 reconnects, while uploading
            if reconnect % 5 == 4:  # a client that can't set headers
                stream = open_stream(web, f"{path}?last_event_id={last_id}", headers)
            else:
                stream = open_stream(web, path, {**headers, "Last-Event-ID": last_id})
            first = stream.next()
            assert first and first.event == "run-status"  # the snapshot, on every connect
            for _ in range(rng.randint(1, 40)):
                event = stream.next(timeout=10)
                assert event is not None, "no event within 10 s while uploading"
                if event.id is not None:
                    seen.append(event.id)
                    last_id = event.id
            stream.cut()
    finally:
        stop.set()
        uploads.join(timeout=60)
    assert not uploads.is_alive()
    expected = stored_event_ids(trainer)
    stream = open_stream(web, path, {**headers, "Last-Event-ID": last_id})
    while last_id != expected[-1]:
        event = stream.next(timeout=20)
        assert event is not None, f"stream stopped at {last_id}, before {expected[-1]}"
        if event.id is not None:
            seen.append(event.id)
            last_id = event.id
    stream.cut()
    duplicates = len(seen) - len(set(seen))
    gaps = sorted(set(expected) - set(seen), key=parse_event_id)
    assert duplicates == 0, [i for i in seen if seen.count(i) > 1][:10]
    assert gaps == [], gaps[:10]
    assert seen == expected  # and in order
    assert any(i.endswith(":alert") for i in seen)
    print(f"{len(seen)} events over 51 connections, 0 duplicates, 0 gaps")


def stored_event_ids(trainer: Trainer) -> list[str]:
    keys = [
        (a, s, 0)
        for a, s in IngestedRecord.objects.filter(run=trainer.run).values_list("attempt", "seq")
    ]
    keys += [
        (a, s, 1)
        for a, s in set(RunAlert.objects.filter(run=trainer.run).values_list("attempt", "seq"))
    ]
    return [f"{a}:{s}" + (":alert" if r else "") for a, s, r in sorted(keys)]


def test_streams_are_bounded_per_process_and_recycled(
    tmp_path: Path, django_db_setup: None
) -> None:
    server = start_web_server(
        tmp_path, RLSTUDIO_SSE_MAX_STREAMS="2", RLSTUDIO_SSE_MAX_STREAM_S="2", LOG_LEVEL="WARNING"
    )
    try:
        lab = make_lab()
        trainer = lab.start_attempt(lab.new_run())
        headers = personal_token(lab)
        path = f"/api/runs/{trainer.run.pk}/events"
        first, second = open_stream(server, path, headers), open_stream(server, path, headers)
        refused = Stream(server.info["url"], path, headers)
        assert refused.status == 503
        assert refused.response.getheader("Retry-After") == "5"
        first.cut()
        deadline = time.monotonic() + 10
        while True:  # the server notices the dropped client and frees its slot
            again = Stream(server.info["url"], path, headers)
            if again.status == 200 or time.monotonic() > deadline:
                break
            again.cut()
            time.sleep(0.2)
        assert again.status == 200
        # A stream ends after its lifetime (2 s here); EventSource reconnects on its own.
        started = time.monotonic()
        while second.next(timeout=10) is not None:
            pass
        assert time.monotonic() - started < 5
        again.cut()
    finally:
        server.stop()

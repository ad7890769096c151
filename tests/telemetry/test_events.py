"""The streams' replay and access rules, through the test client (WSGI: a stream ends
after its replay). Live delivery over uvicorn is in test_sse_live.py."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from studio.runs import lifecycle
from studio.runs.models import RunStatus
from studio.telemetry.alerts.rules import REWARD_ERROR_RATE
from studio.telemetry.live.sse_frames import BadEventId, parse_event_id
from tests.telemetry.conftest import Lab, Trainer, checkpoint, log, metrics, samples, status
from tests.telemetry.sse import Event, parse


def events_of(client: APIClient, path: str, last_event_id: str | None = None) -> list[Event]:
    headers = {"HTTP_LAST_EVENT_ID": last_event_id} if last_event_id is not None else {}
    response = client.get(path, **headers)
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "text/event-stream"
    return parse(response.content.decode())


def ingest_a_run(trainer: Trainer) -> None:
    records = [
        status(0, "running"),
        metrics(1, 1, {REWARD_ERROR_RATE: 0.5, "critic/score/mean": 0.25}),
        samples(2, 1),
        log(3, "step 1 done"),
        checkpoint(4, 1),
        metrics(5, 2, {REWARD_ERROR_RATE: 0.0}),
    ]
    assert trainer.post(records).status_code == 200


@pytest.mark.parametrize(
    ("text", "key"),
    [("1:5", (1, 5, 0)), ("2:0:alert", (2, 0, 1)), (" 3:17 ", (3, 17, 0))],
)
def test_event_ids_parse(text: str, key: tuple[int, int, int]) -> None:
    assert parse_event_id(text) == key


@pytest.mark.parametrize("text", ["", "5", "1:x", "1:2:3", "-1:2", "1:2:alerts", "1:" + "9" * 30])
def test_bad_event_ids_are_refused(text: str) -> None:
    with pytest.raises(BadEventId):
        parse_event_id(text)


def test_a_reconnect_replays_every_later_record_in_order(lab: Lab, trainer: Trainer) -> None:
    ingest_a_run(trainer)
    viewer = lab.user_client("viewer")
    replayed = events_of(viewer, f"/api/runs/{trainer.run.pk}/events", "0:0")
    snapshot, *rest = replayed
    assert snapshot.event == "run-status" and snapshot.id is None
    assert snapshot.data["status"] == "running"
    assert [(e.event, e.id) for e in rest] == [
        ("status", "1:0"),
        ("metrics", "1:1"),
        ("alert", "1:1:alert"),
        ("samples", "1:2"),
        ("log", "1:3"),
        ("checkpoint", "1:4"),
        ("metrics", "1:5"),
    ]
    by_id = {e.id: e.data for e in rest}
    assert by_id["1:1"]["values"] == {REWARD_ERROR_RATE: 0.5, "critic/score/mean": 0.25}
    assert by_id["1:1"]["step"] == 1 and by_id["1:1"]["time"] == pytest.approx(1_732_270_001.0)
    assert [a["kind"] for a in by_id["1:1:alert"]["alerts"]] == ["reward_errors"]
    assert [s["score"] for s in by_id["1:2"]["samples"]] == [1.0, 0.0]
    assert by_id["1:2"]["samples"][0]["response_preview"] == "The answer is 2."
    assert by_id["1:3"] == {
        "attempt": 1,
        "seq": 3,
        "time": pytest.approx(1_732_270_003.0),
        "level": "info",
        "message": "step 1 done",
    }
    assert by_id["1:4"]["path"] == "var/checkpoints/x/step-1"
    assert by_id["1:0"]["status"] == "running"


def test_a_reconnect_resumes_exactly_after_its_last_event(lab: Lab, trainer: Trainer) -> None:
    ingest_a_run(trainer)
    owner = lab.user_client("owner")
    path = f"/api/runs/{trainer.run.pk}/events"
    after_record = [e.id for e in events_of(owner, path, "1:1")[1:]]
    assert after_record == ["1:1:alert", "1:2", "1:3", "1:4", "1:5"]  # its alerts come next
    after_alert = [e.id for e in events_of(owner, path, "1:1:alert")[1:]]
    assert after_alert == ["1:2", "1:3", "1:4", "1:5"]
    query = owner.get(path, {"last_event_id": "1:4"})
    assert [e.id for e in parse(query.content.decode())[1:]] == ["1:5"]
    assert [e.id for e in events_of(owner, path, "1:5")[1:]] == []


def test_a_new_stream_starts_now_with_a_ready_mark(lab: Lab, trainer: Trainer) -> None:
    path = f"/api/runs/{trainer.run.pk}/events"
    client = lab.user_client("viewer")
    empty = events_of(client, path)
    assert [(e.event, e.id) for e in empty] == [("run-status", None), ("ready", "0:0:alert")]
    ingest_a_run(trainer)
    ready = events_of(client, path)[-1]
    assert (ready.event, ready.id) == ("ready", "1:5:alert")
    assert events_of(client, path, ready.id)[1:] == []


def test_superseded_records_are_not_replayed(lab: Lab, trainer: Trainer) -> None:
    trainer.post([metrics(i, i + 1) for i in range(4)] + [checkpoint(4, 2)])
    lifecycle.transition(trainer.run.pk, {RunStatus.STARTING}, RunStatus.FAILED, "lost")
    lifecycle.resume(trainer.run.pk)
    lifecycle.transition(trainer.run.pk, {RunStatus.QUEUED}, RunStatus.STARTING, "launch")
    second = lab.start_attempt(trainer.run, number=2, resume_from_step=2)
    second.post([metrics(0, 3)], attempt=2)
    replayed = events_of(lab.user_client("owner"), f"/api/runs/{trainer.run.pk}/events", "0:0")
    assert [e.id for e in replayed[1:]] == ["1:0", "1:1", "1:4", "2:0"]


@pytest.mark.parametrize(
    ("who", "code"), [(None, 401), ("outsider", 404), ("viewer", 200), ("owner", 200)]
)
def test_run_streams_are_for_the_projects_members(
    lab: Lab, trainer: Trainer, who: str | None, code: int
) -> None:
    client = lab.user_client(who) if who else APIClient()
    response = client.get(f"/api/runs/{trainer.run.pk}/events")
    assert response.status_code == code
    if code != 200:
        assert response.json()["error"]["code"] in ("not_authenticated", "not_found")
    assert lab.user_client("owner").get("/api/runs/999999/events").status_code == 404


def test_an_ingest_token_does_not_open_a_stream(trainer: Trainer) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {trainer.token}")
    assert client.get(f"/api/runs/{trainer.run.pk}/events").status_code == 401


def test_streams_only_answer_get(lab: Lab, trainer: Trainer) -> None:
    response = lab.user_client("owner").post(f"/api/runs/{trainer.run.pk}/events")
    assert response.status_code == 405
    assert response["Allow"] == "GET"


def test_a_bad_last_event_id_is_a_400_naming_it(lab: Lab, trainer: Trainer) -> None:
    response = lab.user_client("owner").get(
        f"/api/runs/{trainer.run.pk}/events", HTTP_LAST_EVENT_ID="yesterday"
    )
    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["last_event_id"]


def test_the_project_stream_replays_run_status_changes(lab: Lab, trainer: Trainer) -> None:
    client = lab.user_client("viewer")
    path = f"/api/projects/{lab.project.slug}/events"
    ready = events_of(client, path)[-1]
    assert ready.event == "ready" and ready.id is not None
    trainer.post([status(0, "running"), status(1, "succeeded", "done")])
    changes = events_of(client, path, ready.id)
    assert [(e.data["run"], e.data["previous"], e.data["status"]) for e in changes] == [
        (trainer.run.pk, "starting", "running"),
        (trainer.run.pk, "running", "succeeded"),
    ]
    assert all(e.event == "run-status" and int(e.id or 0) > int(ready.id) for e in changes)
    assert lab.user_client("outsider").get(path).status_code == 404
    assert APIClient().get(path).status_code == 401

"""The chat playground over the API, with the model server played by the test: what a
project can chat with, a message queued for a server started once, the server's
bootstrap, long poll and reports turned into the exchange's events, and the refusals."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from rest_framework.test import APIClient

from studio.model_registry.models import RegisteredModel
from studio.playground import servers, store
from studio.runs.models import Checkpoint, Run
from studio.telemetry.live.pubsub import namespace
from tests.studio.conftest import World
from tests.studio.test_run_inputs import upload
from tests.verl_data import counting_answers, verl_rows

USER = {"role": "user", "content": "What is 2+3?"}


def forget_playground() -> None:
    """Drop the playground's Redis keys of this test database: project ids repeat from one
    test session to the next, and a record left by an earlier one would look alive."""
    client = store.client()
    for key in client.scan_iter(f"{namespace()}:pg:*", count=1000):
        client.delete(key)


@pytest.fixture(autouse=True)
def clean_playground(db: None) -> Iterator[None]:
    forget_playground()
    yield
    forget_playground()  # a live server left behind would count as a running job


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, str]]:
    """The start requests the studio would send to a worker (no Celery here)."""
    calls: list[tuple[str, str, str]] = []
    monkeypatch.setattr(servers, "_send_start", lambda *args: calls.append(args))
    # The request's transaction is the test's, never committed: run the hook at once.
    monkeypatch.setattr(servers, "transaction", SimpleNamespace(on_commit=lambda fn: fn()))
    return calls


@pytest.fixture
def run(world: World, settings: Any, tmp_path: Path) -> Run:
    """A run of the demo model with a checkpoint on disk at step 2 and a pruned one."""
    settings.RLSTUDIO_CHECKPOINT_ROOT = str(tmp_path / "checkpoints")
    settings.MEDIA_ROOT = tmp_path / "media"
    version = upload(world, world.project, "counting", verl_rows(counting_answers(5)), tmp_path)
    member = world.client("member")
    body = {"project": "alpha", "name": "demo", "validation": "none", "dataset_version": version.pk}
    created = member.post("/api/runs/", body, format="json")
    assert created.status_code == 201, created.content
    run = Run.objects.get(pk=created.json()["id"])
    folder = tmp_path / "checkpoints" / f"run-{run.pk}" / "step_2"
    folder.mkdir(parents=True)
    for name in ("actor.pt", "meta.json"):  # what a model server loads (checked at start)
        (folder / name).write_text("{}")
    Checkpoint.objects.create(run=run, attempt=1, step=2, uri=str(folder))
    Checkpoint.objects.create(run=run, attempt=1, step=1, uri=str(tmp_path / "gone"))
    return run


def send(client: APIClient, *targets: dict[str, int], **body: Any) -> Any:
    chats = [{"target": t, "messages": [USER]} for t in targets]
    payload = {"project": "alpha", "chats": chats, **body}
    return client.post("/api/playground/exchanges/", payload, format="json")


def events(client: APIClient, exchange: str) -> list[tuple[str, dict[str, Any]]]:
    """The exchange's events so far (the test client gets the replay, then the end)."""
    response = client.get(f"/api/playground/exchanges/{exchange}/events?last_event_id=0")
    assert response.status_code == 200
    text = b"".join(response.streaming_content if response.streaming else [response.content])
    found = []
    for block in text.decode().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in lines:
            found.append((lines["event"], json.loads(lines["data"])))
    return found


def demo_model(world: World) -> int:
    return RegisteredModel.objects.get(project=world.project, name="demo-model").pk


def test_it_lists_the_projects_models_and_reachable_checkpoints(world, run):
    response = world.client("viewer").get("/api/playground/models/?project=alpha")
    assert response.status_code == 200
    rows = response.json()
    assert [(r["kind"], r["label"], r["server"]) for r in rows] == [
        ("model", "demo-model", None),
        ("checkpoint", "demo @ step 2", None),  # step 1 was pruned: not offered
    ]
    assert world.client("outsider").get("/api/playground/models/?project=alpha").status_code == 404


def test_sending_starts_one_server_per_model_and_says_it_is_loading(world, run, started):
    member = world.client("member")
    model = {"model": demo_model(world)}
    checkpoint = {"checkpoint": Checkpoint.objects.get(run=run, step=2).pk}
    first = send(member, model, checkpoint, sampling={"max_new_tokens": 32, "min_new_tokens": 8})
    assert first.status_code == 201, first.content
    again = send(member, model)
    assert again.status_code == 201
    # One server per model, however many messages: the second found the first starting.
    assert [c[0] for c in started] == [
        f"p{world.project.pk}-m{model['model']}",
        f"p{world.project.pk}-c{checkpoint['checkpoint']}",
    ]
    replies = first.json()["replies"]
    assert [(r["label"], r["state"]) for r in replies] == [
        ("demo-model", "loading"),
        ("demo @ step 2", "loading"),
    ]
    statuses = [e for e in events(member, first.json()["id"]) if e[0] == "reply-status"]
    assert [s[1]["state"] for s in statuses] == ["loading", "loading"]
    waiting = store.drain(f"p{world.project.pk}-m{model['model']}")
    assert len(waiting) == 2 and waiting[0]["sampling"]["min_new_tokens"] == 8


def test_a_server_bootstraps_once_polls_and_its_reports_become_the_exchanges_events(
    world, run, started
):
    member = world.client("member")
    exchange = send(member, {"model": demo_model(world)}).json()
    [(server_id, submission_id, _)] = started
    handoff = servers.server_handoff(server_id, submission_id)
    spec = servers.job_spec(server_id, submission_id, handoff)
    assert spec is not None and spec.num_cpus == 0.5  # a share of a CPU, not a whole one
    # The job names a file in the server's own folder; the secret is only in the file.
    env = spec.runtime_env["env_vars"]
    secret = servers.bootstrap_secret(submission_id)
    assert not [v for v in [*env.values(), spec.entrypoint, *spec.metadata.values()] if secret in v]
    handoff.deliver()
    secret_file = Path(env["RLSTUDIO_BOOTSTRAP_FILE"])
    assert secret_file.parent.name == server_id and secret_file.read_text() == secret
    base = f"/api/playground/servers/{server_id}"

    answer = APIClient().post(f"{base}/bootstrap", {"secret": secret}, format="json")
    assert answer.status_code == 200, answer.content
    settings_ = answer.json()
    assert Path(settings_["model_path"]).name == "demo-model"  # resolved on the server
    again = APIClient().post(f"{base}/bootstrap", {"secret": secret}, format="json")
    assert again.status_code == 403  # the secret works once

    server = APIClient()
    server.credentials(HTTP_AUTHORIZATION=f"Bearer {settings_['token']}")
    assert server.post(f"{base}/report", {"kind": "ready"}, format="json").status_code == 200
    request = server.get(f"{base}/next?wait=1")
    assert request.status_code == 200
    job = request.json()
    assert job["messages"] == [USER] and job["exchange"] == exchange["id"]
    ids = {"exchange": job["exchange"], "reply": job["reply"]}
    for report in (
        {"kind": "start", "prompt_tokens": 9},
        {"kind": "chunk", "offset": 0, "text": "2+3"},
        {"kind": "chunk", "offset": 3, "text": "=5"},
        {
            "kind": "done",
            "offset": 5,
            "text": "!",
            "finish_reason": "eos",
            "tokens": 6,
            "seconds": 0.1,
            "first_token_s": 0.01,
        },
    ):
        response = server.post(f"{base}/report", {**ids, **report}, format="json")
        assert response.status_code == 200, response.content
    kinds = [
        (kind, data.get("text") or data.get("state"))
        for kind, data in events(member, job["exchange"])
    ]
    assert kinds == [
        ("reply-status", "loading"),
        ("reply-status", "generating"),
        ("chunk", "2+3"),
        ("chunk", "=5"),
        ("chunk", "!"),
        ("done", None),
        ("end", None),
    ]
    # Idle with nothing waiting: released, and its token no longer opens anything.
    assert server.post(f"{base}/report", {"kind": "released"}, format="json").json() == {
        "released": True
    }
    assert server.get(f"{base}/next?wait=0").status_code == 401


def test_a_server_is_not_released_while_a_message_waits_for_it(world, run, started):
    member = world.client("member")
    send(member, {"model": demo_model(world)})
    [(server_id, submission_id, _)] = started
    token = servers.bootstrap(server_id, servers.bootstrap_secret(submission_id))
    server = APIClient()
    server.credentials(HTTP_AUTHORIZATION=f"Bearer {token['token']}")
    base = f"/api/playground/servers/{server_id}"
    answer = server.post(f"{base}/report", {"kind": "released"}, format="json").json()
    assert answer == {"released": False}


def test_a_model_that_fails_to_load_answers_every_waiting_message_with_why(world, run, started):
    member = world.client("member")
    exchange = send(member, {"model": demo_model(world)}).json()
    [(server_id, _, _)] = started
    servers.mark_failed(server_id, "out of memory")
    kinds = [(k, d.get("message")) for k, d in events(member, exchange["id"])]
    assert kinds[-2:] == [("error", "The model could not load: out of memory"), ("end", None)]
    # While the failure is fresh, a new message gets the same answer at once.
    retry = send(member, {"model": demo_model(world)}).json()
    assert retry["replies"][0]["state"] == "failed"


def test_a_server_may_report_only_on_the_replies_it_was_given(world, run, started):
    member = world.client("member")
    exchange = send(member, {"model": demo_model(world)}).json()
    model_server = started[0][0]
    send(member, {"checkpoint": Checkpoint.objects.get(run=run, step=2).pk})
    other_server, other_submission, _ = started[1]
    token = servers.bootstrap(other_server, servers.bootstrap_secret(other_submission))
    intruder = APIClient()
    intruder.credentials(HTTP_AUTHORIZATION=f"Bearer {token['token']}")
    reply = exchange["replies"][0]["id"]
    report = {"kind": "chunk", "exchange": exchange["id"], "reply": reply, "offset": 0, "text": "x"}
    forged = intruder.post(f"/api/playground/servers/{other_server}/report", report, format="json")
    assert forged.status_code == 403
    wrong_url = intruder.post(
        f"/api/playground/servers/{model_server}/report", report, format="json"
    )
    assert wrong_url.status_code == 401


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"sampling": {"max_new_tokens": 8, "min_new_tokens": 9}}, "sampling"),
        ({"sampling": {"max_new_tokens": 100_000}}, "sampling"),
        ({"chats": [{"target": {"model": 1, "checkpoint": 2}, "messages": [USER]}]}, "chats"),
        (
            {
                "chats": [
                    {"target": {"model": 1}, "messages": [{"role": "assistant", "content": "x"}]}
                ]
            },
            "chats",
        ),
    ],
)
def test_it_refuses_requests_that_cant_be_answered(world, run, started, body, field):
    payload = {
        "project": "alpha",
        "chats": [{"target": {"model": demo_model(world)}, "messages": [USER]}],
    }
    response = world.client("member").post(
        "/api/playground/exchanges/", {**payload, **body}, format="json"
    )
    assert response.status_code == 400
    assert field in json.dumps(response.json())
    assert started == []


def test_only_members_send_and_other_projects_models_are_unknown(world, run, started):
    assert send(world.client("viewer"), {"model": demo_model(world)}).status_code == 403
    other = RegisteredModel.objects.create(
        project=world.other_project,
        name="theirs",
        kind="demo",
        role="policy",
        relative_path="demo-model",
        created_by=world.outsider,
    )
    response = send(world.client("member"), {"model": other.pk})
    assert response.status_code == 400
    assert f"No model {other.pk} in this project" in response.content.decode()
    assert started == []


def test_a_reply_stopped_before_its_server_took_it_is_never_generated(world, run, started):
    member = world.client("member")
    exchange = send(member, {"model": demo_model(world)}).json()
    [(server_id, submission_id, _)] = started
    stopped = member.post(f"/api/playground/exchanges/{exchange['id']}/stop/")
    assert stopped.status_code == 204
    token = servers.bootstrap(server_id, servers.bootstrap_secret(submission_id))
    server = APIClient()
    server.credentials(HTTP_AUTHORIZATION=f"Bearer {token['token']}")
    assert server.get(f"/api/playground/servers/{server_id}/next?wait=0.5").status_code == 204
    kinds = [(k, d.get("finish_reason")) for k, d in events(member, exchange["id"])]
    assert kinds[-2:] == [("done", "stopped"), ("end", None)]
    assert (
        world.client("viewer").post(f"/api/playground/exchanges/{exchange['id']}/stop/").status_code
        == 403
    )

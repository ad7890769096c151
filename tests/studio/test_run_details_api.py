"""A run's alerts, log lines and checkpoints: lists, filters, scoping, downloads."""

from __future__ import annotations

import io
import tarfile
import warnings
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from django.test import AsyncClient, override_settings

from studio.projects.models import ApiToken, Project
from studio.runs.models import Checkpoint, Run
from studio.telemetry.alerts.rules import REWARD_ERROR_RATE, ZERO_SPREAD
from studio.telemetry.alerts.store import raise_alerts
from studio.telemetry.models import LogLine, MetricPoint


def make_run(project: Project, name: str = "run") -> Run:
    return Run.objects.create(project=project, name=name, config={}, created_by=project.created_by)


@pytest.fixture
def run(world) -> Run:
    return make_run(world.project)


# --- alerts ----------------------------------------------------------------------------


def test_alerts_come_newest_first_with_the_steps_and_metrics_that_raised_them(world, run):
    MetricPoint.objects.bulk_create(
        MetricPoint(run=run, attempt=1, seq=step, step=step, key=key, value=value)
        for step in range(1, 6)
        for key, value in ((ZERO_SPREAD, 0.9), (REWARD_ERROR_RATE, 0.3 if step == 2 else 0.0))
    )
    raise_alerts(run.pk, 1, {2: 2})
    raise_alerts(run.pk, 1, {5: 5})

    response = world.client("viewer").get(f"/api/runs/{run.pk}/alerts/")

    assert response.status_code == 200, response.content
    body = response.json()
    assert [(a["kind"], a["step"]) for a in body["results"]] == [
        ("zero_spread_groups", 5),
        ("reward_errors", 2),
    ]
    spread, errors = body["results"]
    assert spread["severity"] == "critical"
    assert spread["evidence"] == {
        "step_min": 1,
        "step_max": 5,
        "metric_keys": [ZERO_SPREAD],
        "component": None,
    }
    assert errors["evidence"]["step_min"] == errors["evidence"]["step_max"] == 2
    assert errors["evidence"]["metric_keys"] == [REWARD_ERROR_RATE]
    assert body["count"] == 2 and {"message", "created_at", "values"} <= set(spread)


def test_a_missing_run_and_another_projects_run_get_the_same_sentence(world):
    """The 404 says what is missing, in words a person reads on the error page, and the
    same words for a run that does not exist and one in a project the user is not in."""
    theirs = make_run(world.other_project)
    missing = theirs.pk + 1000
    for pk in (theirs.pk, missing):
        response = world.client("owner").get(f"/api/runs/{pk}/")
        assert response.status_code == 404
        assert response.json()["error"] == {
            "code": "not_found",
            "message": f"There is no run #{pk} in your projects.",
        }


def test_it_rejects_other_projects_runs(world):
    theirs = make_run(world.other_project)
    LogLine.objects.create(run=theirs, attempt=1, seq=0, level="info", message="secret")
    for what in ("alerts", "logs", "checkpoints"):
        response = world.client("owner").get(f"/api/runs/{theirs.pk}/{what}/")
        assert response.status_code == 404, what
        assert response.json()["error"]["code"] == "not_found"
    assert world.client(None).get(f"/api/runs/{theirs.pk}/logs/").status_code == 401


# --- logs ------------------------------------------------------------------------------


def add_lines(run: Run, lines: list[tuple[int, int, str]]) -> None:
    LogLine.objects.bulk_create(
        LogLine(run=run, attempt=attempt, seq=seq, level=level, message=f"{attempt}:{seq}")
        for attempt, seq, level in lines
    )


def messages(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [line["message"] for line in response.json()["results"]]


def test_a_level_filter_keeps_that_level_and_above_whatever_the_case(world, run):
    add_lines(
        run,
        [(1, 0, "debug"), (1, 1, "info"), (1, 2, "WARNING"), (1, 3, "warn"), (2, 0, "error")],
    )
    add_lines(run, [(2, 1, "CRITICAL"), (2, 2, "progress")])
    client = world.client("viewer")
    url = f"/api/runs/{run.pk}/logs/"

    assert messages(client.get(url, {"level": "warning"})) == ["1:2", "1:3", "2:0", "2:1"]
    assert messages(client.get(url, {"level": "Error"})) == ["2:0", "2:1"]
    everything = messages(client.get(url))
    assert everything == ["1:0", "1:1", "1:2", "1:3", "2:0", "2:1", "2:2"]


def test_after_seq_continues_after_a_line_already_seen_across_attempts(world, run):
    add_lines(run, [(1, 0, "info"), (1, 1, "info"), (2, 0, "info"), (2, 1, "info")])
    client = world.client("viewer")
    url = f"/api/runs/{run.pk}/logs/"

    assert messages(client.get(url, {"after_seq": 0})) == ["1:1", "2:0", "2:1"]
    assert messages(client.get(url, {"after_attempt": 2, "after_seq": 0})) == ["2:1"]
    assert messages(client.get(url, {"attempt": 1})) == ["1:0", "1:1"]
    page = client.get(url, {"page_size": 3}).json()
    assert page["count"] == 4 and len(page["results"]) == 3 and page["next"]


def test_an_unknown_level_is_a_clear_error(world, run):
    response = world.client("viewer").get(f"/api/runs/{run.pk}/logs/", {"level": "loud"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert "'loud' is not a log level" in error["fields"]["level"][0]
    assert "WARNING" in error["message"]


# --- checkpoints -----------------------------------------------------------------------


@pytest.fixture
def checkpoint_root(tmp_path: Path):
    with override_settings(RLSTUDIO_CHECKPOINT_ROOT=str(tmp_path / "checkpoints")):
        yield tmp_path / "checkpoints"


def write_checkpoint(root: Path, run: Run, step: int) -> Path:
    folder = root / f"run-{run.pk}" / f"step-{step}"
    (folder / "model").mkdir(parents=True)
    (folder / "model" / "weights.bin").write_bytes(bytes(range(256)) * 40)  # 10,240 bytes
    (folder / "state.json").write_text(f'{{"step": {step}}}')
    return folder


def test_checkpoints_say_which_the_studio_can_serve_and_why_not(world, run, checkpoint_root):
    here = write_checkpoint(checkpoint_root, run, 3)
    elsewhere = checkpoint_root.parent / "elsewhere"
    elsewhere.mkdir()
    escape = checkpoint_root / f"run-{run.pk}" / "escape"
    escape.symlink_to(elsewhere)
    for step, uri in (
        (3, str(here)),
        (6, "s3://bucket/run/step-6"),
        (9, str(checkpoint_root / f"run-{run.pk}" / "step-9")),  # pruned
        (12, str(escape)),
        (15, str(elsewhere)),
    ):
        Checkpoint.objects.create(run=run, attempt=1, step=step, uri=uri)

    response = world.client("viewer").get(f"/api/runs/{run.pk}/checkpoints/")

    assert response.status_code == 200, response.content
    items = {item["step"]: item for item in response.json()["results"]}
    assert list(items) == [3, 6, 9, 12, 15]
    served = items[3]
    assert served["reachable"] is True and served["unreachable_reason"] == ""
    assert served["size_bytes"] == 10_240 + len('{"step": 3}')
    assert served["download_url"] == f"/api/runs/{run.pk}/checkpoints/{served['id']}/download"
    for step in (6, 9, 12, 15):
        item = items[step]
        assert item["reachable"] is False and item["download_url"] is None
        assert item["size_bytes"] is None
        assert item["uri"] in item["unreachable_reason"]
        assert "RLSTUDIO_CHECKPOINT_ROOT" in item["unreachable_reason"]
    assert "object store" in items[6]["unreachable_reason"]
    assert "outside this run's checkpoint folder" in items[12]["unreachable_reason"]


def test_a_reachable_checkpoint_downloads_as_a_tar_of_its_folder(world, run, checkpoint_root):
    folder = write_checkpoint(checkpoint_root, run, 3)
    (folder / "passwd").symlink_to("/etc/passwd")  # kept as a link, never read
    checkpoint = Checkpoint.objects.create(run=run, attempt=1, step=3, uri=str(folder))

    response = world.client("viewer").get(
        f"/api/runs/{run.pk}/checkpoints/{checkpoint.pk}/download"
    )

    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Disposition"] == f'attachment; filename="run-{run.pk}-step-3.tar"'
    body = b"".join(response.streaming_content)
    assert int(response["Content-Length"]) == len(body)
    with tarfile.open(fileobj=io.BytesIO(body)) as tar:
        names = sorted(tar.getnames())
        top = f"run-{run.pk}-step-3"
        assert names == [top, f"{top}/model", f"{top}/model/weights.bin", f"{top}/passwd",
                         f"{top}/state.json"]  # fmt: skip
        weights = tar.extractfile(f"{top}/model/weights.bin")
        assert weights is not None and weights.read() == bytes(range(256)) * 40
        link = tar.getmember(f"{top}/passwd")
        assert link.issym() and link.linkname == "/etc/passwd" and link.size == 0


def test_an_unreachable_checkpoint_download_is_a_409_that_says_why(world, run, checkpoint_root):
    checkpoint = Checkpoint.objects.create(run=run, attempt=1, step=6, uri="s3://bucket/step-6")
    url = f"/api/runs/{run.pk}/checkpoints/{checkpoint.pk}/download"

    response = world.client("viewer").get(url)

    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "checkpoint_unreachable"
    assert "s3://bucket/step-6" in error["message"]
    assert "RLSTUDIO_CHECKPOINT_ROOT" in error["message"]
    theirs = Checkpoint.objects.create(
        run=make_run(world.other_project), attempt=1, step=1, uri="/tmp"
    )
    wrong_run = f"/api/runs/{run.pk}/checkpoints/{theirs.pk}/download"
    assert world.client("viewer").get(wrong_run).status_code == 404


def test_under_asgi_the_download_is_streamed_chunk_by_chunk_not_listed_first(
    world, run, checkpoint_root
):
    """Django's ASGI handler reads a plain iterator into a list before sending (with a
    warning); the download hands it an async iterator instead."""
    folder = write_checkpoint(checkpoint_root, run, 3)
    checkpoint = Checkpoint.objects.create(run=run, attempt=1, step=3, uri=str(folder))
    _, raw = ApiToken.issue(world.viewer, "asgi")
    client = AsyncClient()
    url = f"/api/runs/{run.pk}/checkpoints/{checkpoint.pk}/download"

    async def fetch() -> tuple[bool, bytes]:
        response = await client.get(url, headers={"Authorization": f"Bearer {raw}"})
        assert response.status_code == 200, response.content
        body = b"".join([chunk async for chunk in response.streaming_content])
        return response.is_async, body

    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="StreamingHttpResponse must consume")
        is_async, body = async_to_sync(fetch)()

    assert is_async
    with tarfile.open(fileobj=io.BytesIO(body)) as tar:
        assert f"run-{run.pk}-step-3/model/weights.bin" in tar.getnames()

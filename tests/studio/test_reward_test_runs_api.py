"""Queued reward test-runs through the API: starting, validation, scoping and reading.

These tests run inside a transaction, so the enqueue (sent on commit) never fires: the
test-runs stay queued. The worker that runs them is tested in
tests/rewards/test_test_runs_in_a_worker.py.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from studio.projects.models import AuditEvent
from studio.rewards.models import RewardTestRun
from tests.rewards.conftest import needs_full_sandbox
from tests.rewards.studio_objects import (
    make_checkpoint,
    make_dataset_version,
    make_reward_version,
)
from workers.rewards import sweep_reward_test_runs

needs_sandbox = needs_full_sandbox()
URL = "/api/reward-test-runs/"


@pytest.fixture
def objects(world, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    dataset = make_dataset_version(world.project, world.owner, tmp_path, ["1", "2", "3", "4"])
    reward = make_reward_version(world.project, world.owner)
    checkpoint = make_checkpoint(world.project, world.owner, dataset, reward, "/nowhere/step_1")
    other_dataset = make_dataset_version(world.other_project, world.outsider, tmp_path, ["9"])
    other_reward = make_reward_version(world.other_project, world.outsider)
    other_checkpoint = make_checkpoint(
        world.other_project, world.outsider, other_dataset, other_reward, "/nowhere/step_2"
    )
    return {
        "dataset": dataset.pk,
        "reward": reward.pk,
        "checkpoint": checkpoint.pk,
        "other_dataset": other_dataset.pk,
        "other_reward": other_reward.pk,
        "other_checkpoint": other_checkpoint.pk,
    }


def start(world, who="member", **body):
    return world.client(who).post(URL, body, format="json")


def test_starting_a_test_run_queues_it_and_answers_202_with_the_resource(world, objects):
    response = start(
        world,
        reward_version=objects["reward"],
        source="demo_model",
        dataset_version=objects["dataset"],
        rows=3,
        samples_per_prompt=2,
        temperature=0.7,
        max_new_tokens=16,
    )
    assert response.status_code == 202, response.json()
    body = response.json()
    assert body["status"] == "queued"
    assert body["progress"] == {"phase": "queued", "done": 0, "total": 0}
    assert body["project"] == "alpha" and body["reward_version"] == objects["reward"]
    assert body["source"] == "demo_model" and body["created_by"] == "member"
    assert body["params"]["rows"] == 3
    assert body["params"]["sampling"]["n"] == 2
    assert body["params"]["sampling"]["temperature"] == 0.7
    assert body["result"] is None
    stored = RewardTestRun.objects.get(pk=body["id"])
    assert stored.dataset_version_id == objects["dataset"]
    assert AuditEvent.objects.filter(action="reward.test", object_id=str(stored.pk)).exists()


def test_viewers_read_test_runs_but_cannot_start_them(world, objects):
    started = start(
        world,
        reward_version=objects["reward"],
        source="completions",
        completions=[{"solution_str": "1", "ground_truth": "1"}],
    )
    assert started.status_code == 202
    viewer = world.client("viewer")
    assert viewer.get(f"{URL}{started.json()['id']}/").status_code == 200
    assert [r["id"] for r in viewer.get(URL).json()["results"]] == [started.json()["id"]]
    refused = start(
        world,
        "viewer",
        reward_version=objects["reward"],
        source="completions",
        completions=[{"solution_str": "1", "ground_truth": "1"}],
    )
    assert refused.status_code == 403
    assert RewardTestRun.objects.count() == 1


def test_outsiders_cannot_see_or_start_another_projects_test_runs(world, objects):
    started = start(
        world,
        reward_version=objects["reward"],
        source="references",
        dataset_version=objects["dataset"],
    )
    eve = world.client("outsider")
    assert eve.get(f"{URL}{started.json()['id']}/").status_code == 404
    assert eve.get(URL).json()["results"] == []
    assert eve.get(URL, {"project": "alpha"}).json()["results"] == []
    refused = start(
        world,
        "outsider",
        reward_version=objects["reward"],
        source="references",
        dataset_version=objects["dataset"],
    )
    assert refused.status_code == 404
    assert "in your projects" in refused.json()["error"]["message"]


@pytest.mark.parametrize(
    ("field", "key"), [("dataset_version", "other_dataset"), ("checkpoint", "other_checkpoint")]
)
def test_another_projects_dataset_or_checkpoint_is_a_400_naming_the_field(
    world, objects, field, key
):
    body = {
        "reward_version": objects["reward"],
        "source": "checkpoint",
        "dataset_version": objects["dataset"],
        "checkpoint": objects["checkpoint"],
        field: objects[key],
    }
    response = start(world, **body)
    assert response.status_code == 400
    assert field in response.json()["error"]["fields"]
    assert not RewardTestRun.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"source": "references"}, "dataset_version"),
        ({"source": "checkpoint", "dataset_version": "D"}, "checkpoint"),
        ({"source": "completions"}, "completions"),
        (
            {
                "source": "completions",
                "dataset_version": "D",
                "completions": [{"solution_str": "1", "ground_truth": "1"}],
            },
            "dataset_version",
        ),
        (
            {"source": "demo_model", "dataset_version": "D", "rows": 50, "samples_per_prompt": 5},
            "samples_per_prompt",
        ),
        (
            {"source": "demo_model", "dataset_version": "D", "max_new_tokens": 100000},
            "max_new_tokens",
        ),
        ({"source": "demo_model", "dataset_version": "D", "temperature": -1}, "temperature"),
        ({"source": "references", "dataset_version": "D", "offset": 4}, "offset"),
        (
            {"source": "references", "dataset_version": "D", "solution_template": "x"},
            "solution_template",
        ),
        ({"source": "nope"}, "source"),
        (
            {
                "source": "completions",
                "completions": [{"solution_str": "x" * 70000, "ground_truth": "1"}],
            },
            "completions",
        ),
    ],
)
def test_bad_input_is_a_400_naming_the_field_and_stores_nothing(world, objects, body, field):
    body = {k: objects["dataset"] if v == "D" else v for k, v in body.items()}
    response = start(world, reward_version=objects["reward"], **body)
    assert response.status_code == 400, response.json()
    assert field in response.json()["error"]["fields"], response.json()
    assert not RewardTestRun.objects.exists()


def test_too_many_pasted_bytes_are_refused(world, objects):
    big = [{"solution_str": "x" * 60000, "ground_truth": "1"}] * 38  # ~2.3 MB as JSON
    response = start(world, reward_version=objects["reward"], source="completions", completions=big)
    assert response.status_code == 400
    assert "at most" in response.json()["error"]["fields"]["completions"][0]


def test_a_running_test_run_past_its_deadline_is_failed_by_the_sweep(world, objects):
    started = start(
        world,
        reward_version=objects["reward"],
        source="references",
        dataset_version=objects["dataset"],
    ).json()
    RewardTestRun.objects.filter(pk=started["id"]).update(
        status="running", started_at=timezone.now(), deadline=timezone.now() - timedelta(seconds=1)
    )
    assert sweep_reward_test_runs() == 1
    body = world.client("viewer").get(f"{URL}{started['id']}/").json()
    assert body["status"] == "failed"
    assert body["error_code"] == "worker_lost"
    assert "stopped without finishing" in body["error"]
    assert body["finished_at"] is not None


def test_reading_a_stale_test_run_writes_nothing(world, objects):
    started = start(
        world,
        reward_version=objects["reward"],
        source="references",
        dataset_version=objects["dataset"],
    ).json()
    RewardTestRun.objects.filter(pk=started["id"]).update(
        status="running", started_at=timezone.now(), deadline=timezone.now() - timedelta(seconds=1)
    )
    client = world.client("viewer")
    assert client.get(f"{URL}{started['id']}/").json()["status"] == "running"
    assert client.get(URL).json()["results"][0]["status"] == "running"
    assert RewardTestRun.objects.get(pk=started["id"]).status == "running"


def test_a_test_run_no_worker_took_for_an_hour_is_failed_by_the_sweep(world, objects):
    started = start(
        world,
        reward_version=objects["reward"],
        source="references",
        dataset_version=objects["dataset"],
    ).json()
    fresh = start(
        world,
        reward_version=objects["reward"],
        source="references",
        dataset_version=objects["dataset"],
    ).json()
    RewardTestRun.objects.filter(pk=started["id"]).update(
        created_at=timezone.now() - timedelta(hours=1, seconds=1)
    )
    sweep_reward_test_runs()
    listed = {r["id"]: r for r in world.client("viewer").get(URL).json()["results"]}
    assert listed[started["id"]]["status"] == "failed"
    assert listed[started["id"]]["error_code"] == "not_started"
    assert "check that a Celery worker is running" in listed[started["id"]]["error"]
    assert listed[fresh["id"]]["status"] == "queued"


def test_a_running_test_run_before_its_deadline_is_left_alone(world, objects):
    started = start(
        world,
        reward_version=objects["reward"],
        source="references",
        dataset_version=objects["dataset"],
    ).json()
    RewardTestRun.objects.filter(pk=started["id"]).update(
        status="running", deadline=timezone.now() + timedelta(minutes=5)
    )
    listed = world.client("member").get(URL, {"status": "running"}).json()["results"]
    assert [r["id"] for r in listed] == [started["id"]]


def test_lists_filter_by_function_and_version_and_carry_no_rows(world, objects):
    start(
        world,
        reward_version=objects["reward"],
        source="references",
        dataset_version=objects["dataset"],
    )
    second = make_reward_version(world.project, world.owner, name="second")
    start(world, reward_version=second.pk, source="references", dataset_version=objects["dataset"])
    client = world.client("member")
    by_version = client.get(URL, {"reward_version": second.pk}).json()["results"]
    assert [r["reward_version"] for r in by_version] == [second.pk]
    by_function = client.get(URL, {"function": second.function_id}).json()["results"]
    assert len(by_function) == 1
    assert "result" not in by_function[0] and by_function[0]["summary"] is None


@needs_sandbox
def test_the_synchronous_test_is_recorded_as_a_test_run_with_the_same_result(world, objects):
    function = make_reward_version(world.project, world.owner, name="sync").function_id
    response = world.client("member").post(
        f"/api/reward-functions/{function}/versions/1/test/",
        {"dataset_version": objects["dataset"], "rows": 4},
        format="json",
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert [r["score"] for r in body["rows"]] == [1.0, 1.0, 1.0, 1.0]
    stored = world.client("viewer").get(f"{URL}{body['test_run']}/").json()
    assert stored["status"] == "succeeded"
    assert stored["source"] == "references"
    assert stored["progress"] == {"phase": "done", "done": 4, "total": 4}
    assert stored["result"]["rows"] == body["rows"]
    assert stored["result"]["summary"] == body["summary"]
    listed = world.client("viewer").get(URL).json()["results"]
    assert listed[0]["summary"]["mean"] == 1.0

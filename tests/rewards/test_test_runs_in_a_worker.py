"""Reward test-runs end to end: the API queues them, a real Celery worker (bound to the
test database) claims and runs them in the real sandbox, sampling from the real demo
model in a `python -m trainer sample` subprocess; the browser's polling is the API's GET.
"""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from rest_framework.test import APIClient

from studio.datasets.models import DatasetVersion
from studio.projects.models import ApiToken, Membership, Project, Role
from studio.rewards import lifecycle
from studio.rewards.models import RewardTestRun
from tests.live import LiveProcess, start_celery_worker
from tests.rewards.conftest import needs_full_sandbox
from tests.rewards.studio_objects import (
    make_checkpoint,
    make_dataset_version,
    make_reward_version,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),  # the worker sees committed rows only
    needs_full_sandbox(),
]
URL = "/api/reward-test-runs/"

# Even answers score 0.5, odd ones 1.0, when the response is the answer; "boom" raises.
PARITY = """
def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):
    if solution_str == "boom":
        raise ValueError("cannot score boom")
    exact = float(solution_str.strip() == str(ground_truth))
    return {"score": exact * (1.0 if int(ground_truth) % 2 else 0.5), "exact": exact}
"""
LENGTH = """
def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):
    return {"score": min(len(solution_str), 10) / 10, "length": float(len(solution_str))}
"""
LOOP = """
def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):
    while True:
        pass
"""


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("media")


@pytest.fixture(scope="module")
def worker(
    django_db_setup: None,
    demo_assets: Path,
    media: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Any:
    started = start_celery_worker(
        tmp_path_factory.mktemp("worker-logs"),
        MEDIA_ROOT=str(media),
        RLSTUDIO_DEMO_MODEL_DIR=str(demo_assets / "model"),
        RLSTUDIO_REWARD_TEST_BUDGET_S="20",
        RLSTUDIO_REWARD_TEST_SAMPLE_LIMIT_S="120",
    )
    yield started
    started.stop()


@pytest.fixture
def alpha(settings: Any, media: Path, worker: LiveProcess, tmp_path: Path) -> dict[str, Any]:
    settings.MEDIA_ROOT = str(media)
    user = User.objects.create_user("member", "m@example.org", "a-long-password-123")
    project = Project.objects.create(name="Alpha", slug="alpha", created_by=user)
    Membership.objects.create(project=project, user=user, role=Role.MEMBER)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {ApiToken.issue(user, 't')[1]}")
    return {"user": user, "project": project, "client": client, "worker": worker, "tmp": tmp_path}


def dataset(alpha: dict[str, Any], answers: list[str]) -> DatasetVersion:
    return make_dataset_version(alpha["project"], alpha["user"], alpha["tmp"], answers)


def start(alpha: dict[str, Any], code: str, **body: Any) -> int:
    version = make_reward_version(alpha["project"], alpha["user"], code, name=f"f{time.time()}")
    response = alpha["client"].post(URL, {"reward_version": version.pk, **body}, format="json")
    assert response.status_code == 202, response.json()
    return int(response.json()["id"])


def wait_until_ended(alpha: dict[str, Any], pk: int, timeout_s: float = 180) -> dict[str, Any]:
    """Poll as the browser does; every body seen is kept in `body["polled"]`."""
    deadline = time.monotonic() + timeout_s
    polled = []
    while time.monotonic() < deadline:
        body = alpha["client"].get(f"{URL}{pk}/").json()
        polled.append(body)
        if body["status"] in ("succeeded", "failed"):
            return {**body, "polled": polled}
        time.sleep(0.25)
    log = alpha["worker"].log()[-3000:]
    raise AssertionError(f"test-run {pk} still {polled[-1]['status']}; worker log:\n{log}")


def test_dataset_rows_answered_by_their_references_are_scored_with_a_summary(alpha):
    version = dataset(alpha, ["1", "2", "3", "4", "5"])
    pk = start(alpha, PARITY, source="references", dataset_version=version.pk, offset=1, rows=3)
    body = wait_until_ended(alpha, pk)
    assert body["status"] == "succeeded", body["error"]
    rows = body["result"]["rows"]
    assert [(r["index"], r["solution_str"], r["score"]) for r in rows] == [
        (1, "2", 0.5),
        (2, "3", 1.0),
        (3, "4", 0.5),
    ]
    assert rows[0]["prompt"] == "What is 1 + 1?"
    assert all(r["components"] == {"exact": 1.0} and r["error"] == "" for r in rows)
    assert all(r["elapsed_ms"] > 0 for r in rows)
    summary = body["result"]["summary"]
    assert summary["count"] == 3 and summary["failed"] == 0 and summary["error_rate"] == 0.0
    assert summary["mean"] == pytest.approx(2 / 3)
    assert summary["std"] == pytest.approx(0.2357, abs=1e-4)
    assert [b["count"] for b in summary["histogram"]] == [
        0,
        0,
        0,
        0,
        0,
        2,
        0,
        0,
        0,
        1,
    ]  # 0.5 opens the 6th bin
    assert body["progress"] == {"phase": "done", "done": 3, "total": 3}
    assert body["started_at"] and body["finished_at"]


def test_pasted_completions_are_scored_and_a_raising_row_is_an_error(alpha):
    completions = [
        {"solution_str": "3", "ground_truth": "3"},
        {"solution_str": "4", "ground_truth": "4"},
        {"solution_str": "5", "ground_truth": "6"},
        {"solution_str": "boom", "ground_truth": "1"},
    ]
    pk = start(alpha, PARITY, source="completions", completions=completions)
    body = wait_until_ended(alpha, pk)
    assert body["status"] == "succeeded"
    rows = body["result"]["rows"]
    assert [r["score"] for r in rows] == [1.0, 0.5, 0.0, 0.0]
    assert "ValueError" in rows[3]["error"] and "cannot score boom" in rows[3]["error"]
    summary = body["result"]["summary"]
    assert (summary["scored"], summary["failed"], summary["error_rate"]) == (3, 1, 0.25)
    assert summary["mean"] == pytest.approx(0.5)


def test_completions_sampled_from_the_demo_model_are_scored(alpha):
    version = dataset(alpha, ["1", "2", "3"])
    pk = start(
        alpha,
        LENGTH,
        source="demo_model",
        dataset_version=version.pk,
        rows=3,
        samples_per_prompt=2,
        max_new_tokens=8,
        temperature=1.0,
        seed=3,
    )
    body = wait_until_ended(alpha, pk)
    assert body["status"] == "succeeded", body["error"]
    rows = body["result"]["rows"]
    assert [(r["index"], r["sample"]) for r in rows] == [(i, k) for i in range(3) for k in (0, 1)]
    for row in rows:
        assert row["error"] == ""
        assert row["finish_reason"] in ("eos", "length")
        assert row["components"]["length"] == len(row["solution_str"])
        assert row["score"] == pytest.approx(min(len(row["solution_str"]), 10) / 10)
        assert row["prompt"] == f"What is {row['index']} + 1?"
    assert body["progress"] == {"phase": "done", "done": 6, "total": 6}
    assert body["result"]["summary"]["count"] == 6
    assert "sampling" in {polled["progress"]["phase"] for polled in body["polled"]}


def test_an_infinite_loop_gives_per_row_errors_and_the_test_run_still_finishes(alpha):
    completions = [{"solution_str": "1", "ground_truth": "1"}] * 3
    pk = start(alpha, LOOP, source="completions", completions=completions, timeout_s=0.5)
    body = wait_until_ended(alpha, pk)
    assert body["status"] == "succeeded"
    assert all(r["error"].startswith("timeout") for r in body["result"]["rows"])
    assert body["result"]["summary"]["error_rate"] == 1.0
    assert body["result"]["summary"]["mean"] is None


def test_code_that_fails_to_load_fails_the_test_run_with_every_row_explained(alpha):
    code = "raise RuntimeError('no')\n\ndef compute_score(a, b, c, d):\n    return 1.0\n"
    completions = [{"solution_str": "1", "ground_truth": "1"}] * 2
    body = wait_until_ended(
        alpha, start(alpha, code, source="completions", completions=completions)
    )
    assert body["status"] == "failed" and body["error_code"] == "load_failed"
    assert "RuntimeError" in body["error"]
    assert all(r["error"].startswith("load failed") for r in body["result"]["rows"])


def test_a_checkpoint_path_outside_its_runs_folder_fails_with_a_clear_message(alpha):
    version = dataset(alpha, ["1", "2"])
    reward = make_reward_version(alpha["project"], alpha["user"], LENGTH, name="for-run")
    checkpoint = make_checkpoint(
        alpha["project"], alpha["user"], version, reward, "/nonexistent/checkpoints/step_00000007"
    )
    pk = start(
        alpha, LENGTH, source="checkpoint", dataset_version=version.pk, checkpoint=checkpoint.pk
    )
    body = wait_until_ended(alpha, pk)
    assert body["status"] == "failed"
    assert body["error_code"] == "model_unavailable"
    # The uri is a trainer's word: only its own run's checkpoint folder is ever read.
    assert (
        "/nonexistent/checkpoints/step_00000007 is outside this run's checkpoint folder"
        in (body["error"])
    )
    assert body["result"] is None


def test_a_redelivered_task_for_a_finished_test_run_does_nothing(alpha):
    from workers.celery_app import app

    completions = [{"solution_str": "3", "ground_truth": "3"}]
    pk = start(alpha, PARITY, source="completions", completions=completions)
    first = wait_until_ended(alpha, pk)
    before = RewardTestRun.objects.get(pk=pk)
    outcome = app.send_task("workers.test_reward", args=[pk]).get(timeout=60)
    assert outcome == f"test-run {pk} already succeeded"
    after = RewardTestRun.objects.get(pk=pk)
    assert (after.status, after.finished_at, after.result) == (
        before.status,
        before.finished_at,
        before.result,
    )
    assert first["result"]["rows"][0]["score"] == 1.0


def test_a_test_run_running_elsewhere_is_not_run_again_and_fails_once_stale(alpha):
    """A second delivery while another worker holds the test-run waits for its deadline;
    the holder never finished (it was lost), so the test-run is failed, not re-run."""
    from workers.celery_app import app

    version = make_reward_version(alpha["project"], alpha["user"], PARITY, name="held")
    test_run = lifecycle.create(
        version,
        RewardTestRun.Source.COMPLETIONS,
        lifecycle.Params(),
        alpha["user"],
        completions=[
            {"solution_str": "3", "ground_truth": "3", "data_source": "d", "extra_info": {}}
        ],
    )
    held_since = timezone.now()
    RewardTestRun.objects.filter(pk=test_run.pk).update(
        status="running", started_at=held_since, deadline=held_since + timedelta(seconds=3)
    )
    outcome = app.send_task("workers.test_reward", args=[test_run.pk]).get(timeout=60)
    assert outcome == f"test-run {test_run.pk} already failed"
    ended = RewardTestRun.objects.get(pk=test_run.pk)
    assert ended.status == "failed" and ended.error_code == "worker_lost"
    assert ended.result is None and ended.started_at == held_since  # never claimed again


def test_the_hard_time_limit_handler_fails_the_test_run(alpha):
    """Celery calls `on_failure` in the worker's main process after killing the task at
    its hard limit; called here directly (a real hard limit would take minutes)."""
    from celery.exceptions import TimeLimitExceeded

    from workers.rewards import HARD_LIMIT_S, test_reward

    version = make_reward_version(alpha["project"], alpha["user"], PARITY, name="killed")
    test_run = lifecycle.create(version, "references", lifecycle.Params(), alpha["user"])
    RewardTestRun.objects.filter(pk=test_run.pk).update(status="running")
    test_reward.on_failure(TimeLimitExceeded(HARD_LIMIT_S), "task-id", [test_run.pk], {}, None)
    ended = RewardTestRun.objects.get(pk=test_run.pk)
    assert ended.status == "failed" and ended.error_code == "time_limit"
    assert f"hard time limit of {HARD_LIMIT_S:g} s" in ended.error

"""Claiming and submitting a run: one attempt per claim, one Ray job per attempt, and
the job carries what the trainer needs (studio URL, its secret's file) the right way.

The Ray side is tests/runs/dict_ray.py; live/test_runs_on_ray.py does this against a real
Ray head.
"""

from __future__ import annotations

import stat
import time
from pathlib import Path

import pytest

from studio.runs import lifecycle
from studio.runs.bootstrap import attempt_handoff, bootstrap_secret
from studio.runs.jobs import RayRejected, RayUnavailable
from studio.runs.launch import (
    claim,
    job_spec,
    launch,
    parse_submission_id,
    submission_id,
    trainer_config,
)
from studio.runs.models import Checkpoint, IngestToken, Run, RunAttempt, RunStatusChange
from tests.runs.dict_ray import DictRay
from tests.studio.conftest import World


@pytest.fixture(autouse=True)
def checkpoint_root(settings, tmp_path: Path) -> Path:
    """The runs' folders, where each job's secret file goes: the test's own."""
    settings.RLSTUDIO_CHECKPOINT_ROOT = str(tmp_path / "checkpoints")
    return tmp_path / "checkpoints"


def queued_run(world: World, **fields) -> Run:
    defaults = {
        "config": {"checkpoint": {"dir": "resource:run/checkpoint.dir", "resume": "never"}},
        "resources": {"cpus": 1.5, "gpus": 0.0, "memory_gb": 2.0},
    }
    return Run.objects.create(
        project=world.project, name="r", created_by=world.owner, **{**defaults, **fields}
    )


def test_submission_ids_name_the_run_and_attempt(settings):
    settings.RLSTUDIO_RAY_JOB_PREFIX = "prod"
    assert submission_id(12, 3) == "prod-run-12-a3"
    assert parse_submission_id("prod-run-12-a3") == (12, 3)
    assert parse_submission_id("other-run-12-a3") is None
    assert parse_submission_id("prod-run-12-a3-x") is None


def test_only_one_of_two_claims_wins_and_it_creates_one_attempt(world: World):
    run = queued_run(world)
    first, second = claim(run.pk), claim(run.pk)

    assert first is not None
    assert second is None
    assert first.number == 1
    assert first.submission_id == submission_id(run.pk, 1)
    assert list(RunAttempt.objects.filter(run=run)) == [first]
    assert Run.objects.get(pk=run.pk).status == "starting"


def test_a_resumed_run_gets_the_next_attempt_from_its_latest_checkpoint(world: World):
    run = queued_run(world)
    claim(run.pk)
    lifecycle.transition(run.pk, {"starting"}, "failed", "boom")
    Checkpoint.objects.create(run=run, attempt=1, step=4, uri="x/step_4")
    Checkpoint.objects.create(run=run, attempt=1, step=8, uri="x/step_8")
    lifecycle.resume(run.pk)

    attempt = claim(run.pk)

    assert attempt is not None
    assert (attempt.number, attempt.resume_from_step) == (2, 8)
    tree = trainer_config(Run.objects.get(pk=run.pk), attempt)
    assert tree["checkpoint"]["resume"] == "auto"


def test_the_job_carries_only_the_path_of_its_secret_and_its_resources(world: World, settings):
    settings.RLSTUDIO_URL = "http://studio.example:8000/"
    settings.RLSTUDIO_CHECKPOINT_ROOT = "/ckpt"
    run = queued_run(world)
    attempt = claim(run.pk)
    assert attempt is not None

    spec = job_spec(Run.objects.get(pk=run.pk), attempt, attempt_handoff(attempt))

    # Every job's environment, entrypoint and metadata can be read from Ray by whoever
    # reaches its dashboard: no token, config, reward code or secret there, only where
    # the file holding the secret is (written for the trainer account alone).
    env = spec.runtime_env["env_vars"]
    assert set(env) == {
        "RLSTUDIO_URL",
        "RLSTUDIO_RUN_ID",
        "RLSTUDIO_ATTEMPT",
        "RLSTUDIO_BOOTSTRAP_FILE",
        "PYTHONUNBUFFERED",
    }
    assert env["RLSTUDIO_BOOTSTRAP_FILE"] == f"/ckpt/run-{run.pk}/.bootstrap-a1"
    assert env["RLSTUDIO_URL"] == "http://studio.example:8000"
    assert (env["RLSTUDIO_RUN_ID"], env["RLSTUDIO_ATTEMPT"]) == (str(run.pk), "1")
    secret = bootstrap_secret(attempt)
    shown = [*env.values(), spec.entrypoint, *spec.metadata.values(), spec.submission_id]
    assert not [text for text in shown if secret in text]
    assert spec.entrypoint.endswith("-m trainer.warm run --from-studio")
    config = trainer_config(Run.objects.get(pk=run.pk), attempt)
    assert config["checkpoint"]["dir"] == f"/ckpt/run-{run.pk}"  # never shared by two runs
    assert (spec.num_cpus, spec.num_gpus, spec.memory_bytes) == (1.5, 0.0, 2 * 1024**3)


def test_launch_submits_once_and_a_redelivered_launch_submits_nothing_new(world: World):
    ray = DictRay()
    run = queued_run(world)

    assert launch(run.pk, ray) == "submitted"
    assert launch(run.pk, ray) == "not-queued"

    assert [s.submission_id for s in ray.specs] == [submission_id(run.pk, 1)]
    attempt = RunAttempt.objects.get(run=run)
    assert attempt.ray_status == "PENDING"
    # The job's secret, in its file before Ray had the job; the ingest token comes when
    # the trainer redeems it.
    path = Path(ray.specs[0].runtime_env["env_vars"]["RLSTUDIO_BOOTSTRAP_FILE"])
    assert path.read_text() == bootstrap_secret(attempt)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert attempt.bootstrapped_at is None
    assert not IngestToken.objects.filter(attempt=attempt).exists()


def test_a_launch_marks_the_attempts_startup_up_to_rays_first_acceptance(world: World):
    ray = DictRay()
    run = queued_run(world)
    picked = time.time()

    assert launch(run.pk, ray, dispatched_at=picked) == "submitted"

    marks = RunAttempt.objects.get(run=run).startup
    assert marks["created"] == run.created_at.timestamp()
    assert marks["dispatched"] == picked
    assert picked <= marks["claimed"] <= marks["submitted"]
    # Submitted again (the launching worker died before recording Ray's answer): Ray's
    # first acceptance is the one kept.
    RunAttempt.objects.filter(run=run).update(ray_status="")
    assert launch(run.pk, ray) == "already-submitted"
    assert RunAttempt.objects.get(run=run).startup == marks


def test_a_resumed_attempts_startup_begins_when_the_resume_queued_it(world: World):
    run = queued_run(world)
    claim(run.pk)
    lifecycle.transition(run.pk, {"starting"}, "failed", "boom")
    lifecycle.resume(run.pk)

    attempt = claim(run.pk)

    assert attempt is not None
    resumed = RunStatusChange.objects.filter(run=run, to_status="queued").latest("at", "id")
    assert attempt.startup["created"] == resumed.at.timestamp()
    assert "dispatched" not in attempt.startup  # claimed outside a queue pass


def test_a_launch_that_died_after_submitting_is_finished_by_the_redelivery(world: World):
    ray = DictRay()
    run = queued_run(world)

    def die_after_submit(point: str) -> None:
        if point == "submitted":
            raise SystemExit("worker killed")

    with pytest.raises(SystemExit):
        launch(run.pk, ray, die_after_submit)
    assert RunAttempt.objects.get(run=run).ray_status == ""  # Ray has it; we don't know

    assert launch(run.pk, ray) == "already-submitted"  # same id again: Ray refuses it
    assert len(ray.table) == 1
    attempt = RunAttempt.objects.get(run=run)
    assert attempt.ray_status == "PENDING"
    # Both submissions named one file holding one secret: the job Ray kept can still
    # start its trainer.
    paths = {spec.runtime_env["env_vars"]["RLSTUDIO_BOOTSTRAP_FILE"] for spec in ray.specs}
    [path] = paths
    assert Path(path).read_text() == bootstrap_secret(attempt)
    assert [p.name for p in Path(path).parent.iterdir()] == [".bootstrap-a1"]


def test_the_secret_goes_in_the_jobs_environment_only_where_the_operator_says_so(
    world: World, settings
):
    # A cluster that shares no filesystem with the studio (docs/security.md: anyone who
    # can list Ray's jobs may then redeem the secret first).
    settings.RLSTUDIO_BOOTSTRAP_VIA_ENV = True
    ray = DictRay()
    run = queued_run(world)

    assert launch(run.pk, ray) == "submitted"

    attempt = RunAttempt.objects.get(run=run)
    env = ray.specs[0].runtime_env["env_vars"]
    assert env["RLSTUDIO_BOOTSTRAP"] == bootstrap_secret(attempt)
    assert "RLSTUDIO_BOOTSTRAP_FILE" not in env
    assert not attempt_handoff(attempt).path.exists()


def test_a_secret_that_cannot_be_written_fails_the_launch_saying_why(
    world: World, checkpoint_root: Path, tmp_path: Path
):
    # A symlink planted where the run's folder goes (the trainer account owns the root):
    # nothing is written through it.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    checkpoint_root.mkdir()
    ray = DictRay()
    run = queued_run(world)
    (checkpoint_root / f"run-{run.pk}").symlink_to(elsewhere)

    assert launch(run.pk, ray) == "rejected"

    run.refresh_from_db()
    assert run.status == "failed"
    assert "secret could not be written" in run.last_error
    assert "RLSTUDIO_CHECKPOINT_ROOT" in run.last_error
    assert ray.specs == [] and list(elsewhere.iterdir()) == []


def test_ray_refusing_the_job_fails_the_run_with_rays_reason(world: World):
    ray = DictRay(fail_with=RayRejected("runtime_env: bad pip spec"))
    run = queued_run(world)

    assert launch(run.pk, ray) == "rejected"

    run.refresh_from_db()
    assert run.status == "failed"
    assert "bad pip spec" in run.last_error
    attempt = RunAttempt.objects.get(run=run)
    assert not attempt_handoff(attempt).path.exists()  # a job that never starts


def test_ray_being_unreachable_leaves_the_run_starting_for_a_retry(world: World):
    ray = DictRay(fail_with=RayUnavailable("connection refused"))
    run = queued_run(world)

    with pytest.raises(RayUnavailable):
        launch(run.pk, ray)

    run.refresh_from_db()
    attempt = RunAttempt.objects.get(run=run)
    assert run.status == "starting"
    assert "connection refused" in attempt.exit_message
    ray.fail_with = None
    assert launch(run.pk, ray) == "submitted"  # the retry: same attempt, same id
    assert RunAttempt.objects.filter(run=run).count() == 1


def test_a_cancel_that_lands_while_submitting_stops_the_new_job(world: World):
    ray = DictRay()
    run = queued_run(world)

    def user_cancels(point: str) -> None:
        if point == "token-issued":
            lifecycle.cancel(run.pk)

    assert launch(run.pk, ray, user_cancels) == "submitted"
    assert ray.stopped == [submission_id(run.pk, 1)]


def test_a_distributed_run_reserves_one_cpu_for_its_controller_not_the_whole_request(
    world: World,
):
    """Its workers reserve the request through their own placement group; reserving it
    for the entrypoint too would leave them unplaceable on a cluster sized for the run."""
    config = {
        "checkpoint": {"dir": "resource:run/checkpoint.dir", "resume": "never"},
        "resources": {"num_workers": 2, "cpus_per_worker": 1.0},
    }
    run = queued_run(world, config=config, resources={"cpus": 2.0, "gpus": 0.0, "memory_gb": 8})
    attempt = claim(run.pk)
    assert attempt is not None
    spec = job_spec(Run.objects.get(pk=run.pk), attempt, attempt_handoff(attempt))
    assert (spec.num_cpus, spec.num_gpus, spec.memory_bytes) == (1.0, 0.0, 0)


def test_a_stored_run_whose_reward_would_run_in_process_is_never_launched(world: World):
    # Stored before run creation refused it: the launch refuses it too, saying why.
    ray = DictRay()
    config = {"checkpoint": {"resume": "never"}, "reward": {"executor": "inprocess"}}
    run = queued_run(world, config=config)

    assert launch(run.pk, ray) == "rejected"

    run.refresh_from_db()
    assert run.status == "failed"
    assert "reward.executor='inprocess'" in run.last_error
    assert ray.specs == []

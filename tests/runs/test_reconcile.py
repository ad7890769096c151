"""Reconciling runs with their Ray jobs: state mapping, lost jobs, unfinished launches,
orphaned jobs, the queue, and cancel. Ray is tests/runs/dict_ray.py here; the live
tests (live/test_runs_on_ray.py) run the same passes against a real head."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from studio.runs import lifecycle
from studio.runs.jobs import RayUnavailable
from studio.runs.launch import claim, launch, submission_id
from studio.runs.models import Run, RunAttempt
from studio.runs.reconcile import finish_cancel, reconcile, trainer_error_lines
from tests.runs.dict_ray import DictRay
from tests.studio.conftest import World

TRACEBACK = """step 1/2: score=0
INFO something
Traceback (most recent call last):
  File "x.py", line 1, in <module>
ValueError: first problem
Traceback (most recent call last):
  File "trainer/training/loop.py", line 80, in __init__
ValueError: only 3 usable training prompts, fewer than data.train_batch_size=4
"""


def make_run(world: World, name: str = "r", status: str = "queued", **fields) -> Run:
    return Run.objects.create(
        project=world.project,
        name=name,
        config={},
        status=status,
        resources={"cpus": 1.0, "gpus": 0.0, "memory_gb": 1.0},
        created_by=world.owner,
        **fields,
    )


def submitted(world: World, ray: DictRay, name: str = "r") -> tuple[Run, RunAttempt]:
    """A run claimed and submitted (Ray: PENDING)."""
    run = make_run(world, name)
    attempt = claim(run.pk)
    assert attempt is not None
    ray.set(attempt.submission_id, "PENDING")
    RunAttempt.objects.filter(pk=attempt.pk).update(ray_status="PENDING")
    attempt.refresh_from_db()
    return run, attempt


def status_of(run: Run) -> str:
    return Run.objects.get(pk=run.pk).status


def test_the_last_traceback_of_the_job_log_is_the_trainers_error():
    lines = trainer_error_lines(TRACEBACK)
    assert lines.startswith("Traceback (most recent call last):")
    assert "first problem" not in lines
    assert lines.endswith("fewer than data.train_batch_size=4")
    assert trainer_error_lines("a\nb\n") == "a\nb"


def test_ray_running_then_succeeded_moves_the_run_and_records_the_attempt(world: World):
    ray = DictRay()
    run, attempt = submitted(world, ray)

    ray.set(attempt.submission_id, "RUNNING")
    reconcile(ray)
    assert status_of(run) == "running"

    ray.set(attempt.submission_id, "SUCCEEDED", "Job finished successfully.")
    reconcile(ray)
    assert status_of(run) == "succeeded"
    attempt.refresh_from_db()
    assert attempt.ray_status == "SUCCEEDED"
    assert attempt.finished_at is not None


def test_a_job_that_succeeded_before_we_saw_it_run_walks_through_running(world: World):
    ray = DictRay()
    run, attempt = submitted(world, ray)
    ray.set(attempt.submission_id, "SUCCEEDED")

    reconcile(ray)

    history = list(Run.objects.get(pk=run.pk).status_history.values_list("to_status", flat=True))
    assert history[-2:] == ["running", "succeeded"]


def test_a_failed_job_fails_the_run_with_the_trainers_last_error_lines(world: World):
    ray = DictRay()
    run, attempt = submitted(world, ray)
    ray.set(attempt.submission_id, "FAILED", "Job entrypoint command failed with exit code 1")
    ray.logs_by_id[attempt.submission_id] = TRACEBACK

    reconcile(ray)

    run.refresh_from_db()
    assert run.status == "failed"
    assert "only 3 usable training prompts" in run.last_error
    assert "Ray: Job entrypoint command failed with exit code 1" in run.last_error
    assert run.status_reason.startswith("ValueError: only 3 usable training prompts")


def test_terminal_states_are_final_whoever_reports_second(world: World):
    ray = DictRay()
    run, attempt = submitted(world, ray)
    lifecycle.transition(run.pk, {"starting"}, "running", "trainer: running")
    lifecycle.transition(run.pk, {"running"}, "succeeded", "trainer: succeeded")
    ray.set(attempt.submission_id, "FAILED", "exit code 1 while flushing")

    reconcile(ray)

    assert status_of(run) == "succeeded"
    attempt.refresh_from_db()
    assert attempt.ray_status == "FAILED"  # recorded on the attempt all the same


def test_a_job_stopped_outside_the_studio_ends_the_run_cancelled_with_that_reason(world: World):
    ray = DictRay()
    run, attempt = submitted(world, ray)
    ray.set(attempt.submission_id, "RUNNING")
    reconcile(ray)
    ray.set(attempt.submission_id, "STOPPED")

    reconcile(ray)

    run.refresh_from_db()
    assert run.status == "cancelled"
    assert "stopped outside the studio" in run.status_reason


def test_a_job_ray_forgot_fails_the_run_and_the_run_can_be_resumed(world: World):
    ray = DictRay()
    run, attempt = submitted(world, ray)
    ray.set(attempt.submission_id, "RUNNING")
    reconcile(ray)
    ray.table.clear()  # the head restarted: its jobs are gone

    reconcile(ray)

    run.refresh_from_db()
    assert run.status == "failed"
    assert "Ray no longer knows job" in run.last_error
    assert RunAttempt.objects.get(pk=attempt.pk).ray_status == "LOST"
    lifecycle.resume(run.pk)
    report = reconcile(ray)
    assert report.to_launch == [run.pk]


def test_an_unconfirmed_attempt_is_handed_to_a_launch_again_after_the_grace(world: World, settings):
    settings.RLSTUDIO_LAUNCH_GRACE_S = 20
    ray = DictRay()
    run = make_run(world)
    attempt = claim(run.pk)  # the launching worker died here, before submitting
    assert attempt is not None

    report = reconcile(ray)
    assert report.to_resubmit == []  # within the grace: the launch may still be under way

    RunAttempt.objects.filter(pk=attempt.pk).update(
        created_at=timezone.now() - timedelta(seconds=30)
    )
    report = reconcile(ray)
    assert report.to_resubmit == [run.pk]
    assert ray.specs == []  # a pass decides; the launch task submits
    assert launch(run.pk, ray) == "submitted"
    assert reconcile(ray).to_resubmit == []  # now Ray has it: nothing more

    assert [s.submission_id for s in ray.specs] == [submission_id(run.pk, 1)]
    assert RunAttempt.objects.get(pk=attempt.pk).ray_status == "PENDING"


def test_a_submission_finished_after_ray_was_unreachable_passes_every_failure_point(
    world: World, settings
):
    """The launch task's submit timed out (Ray's dashboard under load) and it waits to
    retry; past the grace, reconcile hands the attempt to a launch task, which passes the
    points after the claim. A pass that submitted by itself skipped them, so a crash armed
    there never happened (the chaos test in live/test_runs_on_ray.py timed out waiting)."""
    settings.RLSTUDIO_LAUNCH_GRACE_S = 20
    ray = DictRay(fail_with=RayUnavailable("submitting a job: read timed out"))
    run = make_run(world)
    passed: list[str] = []
    with pytest.raises(RayUnavailable):
        launch(run.pk, ray, passed.append)
    assert passed == ["start", "claimed", "token-issued"]

    ray.fail_with = None
    RunAttempt.objects.filter(run=run).update(created_at=timezone.now() - timedelta(seconds=30))
    report = reconcile(ray)
    assert ray.specs == []
    for run_id in report.to_resubmit:
        launch(run_id, ray, passed.append)
    assert passed[3:] == ["start", "token-issued", "submitted", "recorded"]
    assert RunAttempt.objects.get(run=run).ray_status == "PENDING"


def test_a_launch_ray_never_accepts_fails_at_the_deadline(world: World, settings):
    settings.RLSTUDIO_LAUNCH_DEADLINE_S = 60
    ray = DictRay()
    run = make_run(world)
    attempt = claim(run.pk)
    assert attempt is not None
    RunAttempt.objects.filter(pk=attempt.pk).update(
        created_at=timezone.now() - timedelta(seconds=61), exit_message="connection refused"
    )

    reconcile(ray)

    run.refresh_from_db()
    assert run.status == "failed"
    assert "did not accept job" in run.last_error
    assert "connection refused" in run.last_error


def test_jobs_nobody_wants_are_stopped_and_others_left_alone(world: World, settings):
    settings.RLSTUDIO_ORPHAN_GRACE_S = 60
    ray = DictRay()
    prefix = settings.RLSTUDIO_RAY_JOB_PREFIX
    cancelled = make_run(world, "cancelled", status="cancelled")
    ended_now = make_run(world, "ended", status="succeeded", finished_at=timezone.now())
    ended_long_ago = make_run(
        world, "old", status="failed", finished_at=timezone.now() - timedelta(minutes=5)
    )
    replaced, attempt = submitted(world, ray, "replaced")
    RunAttempt.objects.create(
        run=replaced, number=2, submission_id=submission_id(replaced.pk, 2), ray_status="PENDING"
    )
    ray.set(submission_id(replaced.pk, 2), "RUNNING")
    for run in (cancelled, ended_now, ended_long_ago):
        ray.set(submission_id(run.pk, 1), "RUNNING")
    ray.set(f"{prefix}-run-999999-a1", "RUNNING")  # its run was deleted
    ray.set("someone-elses-job", "RUNNING")

    reconcile(ray)

    assert set(ray.stopped) == {
        submission_id(cancelled.pk, 1),
        submission_id(ended_long_ago.pk, 1),
        attempt.submission_id,  # attempt 1, replaced by attempt 2
        f"{prefix}-run-999999-a1",
    }


def test_queued_runs_that_fit_are_picked_in_priority_order(world: World):
    ray = DictRay(total={"cpus": 2.0, "gpus": 0.0, "memory_gb": 8.0})
    make_run(world, "low", priority=1)  # fits beside "high", but "big" is ahead of it
    high = make_run(world, "high", priority=9)
    big = make_run(world, "big", priority=5)
    Run.objects.filter(pk=big.pk).update(resources={"cpus": 2.0, "memory_gb": 1.0})

    assert reconcile(ray).to_launch == [high.pk]  # big doesn't fit beside it: it waits


def test_a_pass_launches_the_runs_it_picks_itself_in_the_queues_order(world: World, monkeypatch):
    from workers import runs as worker

    sent: list[tuple] = []
    monkeypatch.setattr(worker.launch_run, "apply_async", lambda args, **_: sent.append(args))
    ray = DictRay()
    second = make_run(world, "second", priority=1)
    first = make_run(world, "first", priority=2)

    report = reconcile(ray)
    assert worker.launch_picked(report, ray) == 2

    assert [s.submission_id for s in ray.specs] == [
        submission_id(first.pk, 1),
        submission_id(second.pk, 1),
    ]
    assert sent == []  # no launch_run message: no trip through the broker
    assert RunAttempt.objects.get(run=first).startup["dispatched"] == report.dispatched_at


def test_launches_that_find_ray_unreachable_go_out_as_launch_run_tasks(world: World, monkeypatch):
    from workers import runs as worker

    sent: list[tuple] = []
    monkeypatch.setattr(worker.launch_run, "apply_async", lambda args, **_: sent.append(args))
    ray = DictRay()
    first = make_run(world, "first", priority=2)
    second = make_run(world, "second", priority=1)
    report = reconcile(ray)
    ray.fail_with = RayUnavailable("dashboard timed out")

    assert worker.launch_picked(report, ray) == 0

    # Each with its retries; the first, claimed already, is submitted by its redelivery path.
    assert sent == [(first.pk, report.dispatched_at), (second.pk, report.dispatched_at)]
    assert status_of(first) == "starting" and status_of(second) == "queued"
    ray.fail_with = None
    assert launch(first.pk, ray) == "submitted"  # what its launch_run does


@pytest.mark.parametrize(
    ("ray_ends_as", "run_ends_as"),
    [("STOPPED", "cancelled"), ("SUCCEEDED", "succeeded"), ("FAILED", "failed")],
)
def test_cancel_stops_the_job_and_ends_the_run_where_the_job_ended(
    world: World, ray_ends_as: str, run_ends_as: str
):
    ray = DictRay()
    run, attempt = submitted(world, ray)
    ray.set(attempt.submission_id, "RUNNING")
    reconcile(ray)
    lifecycle.cancel(run.pk)
    if ray_ends_as != "STOPPED":  # it ended on its own before the stop landed
        ray.set(attempt.submission_id, ray_ends_as)  # type: ignore[arg-type]

    assert finish_cancel(run.pk, ray, wait_s=1.0) == run_ends_as


def test_cancelling_before_the_job_reached_ray_needs_no_stop(world: World):
    ray = DictRay()
    run = make_run(world)
    claim(run.pk)  # starting, not submitted yet
    lifecycle.cancel(run.pk)

    assert finish_cancel(run.pk, ray, wait_s=1.0) == "cancelled"
    assert ray.stopped == []

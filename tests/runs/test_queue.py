"""The run queue: order, fit, and what a queued run tells the user it waits for."""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import replace
from datetime import timedelta

import pytest
from django.utils import timezone
from hypothesis import given
from hypothesis import settings as examples
from hypothesis import strategies as st

from studio.runs.fair_share import (
    Limits,
    QueuedRun,
    QueueEntry,
    QueuePlan,
    RunningJobs,
    plan_queue,
    shortfall,
)
from studio.runs.jobs import ClusterResources
from studio.runs.models import Run
from studio.runs.queue import (
    Snapshot,
    free_for_runs,
    held_by_active_runs,
    queue_view,
    queued_runs,
    save_snapshot,
)
from tests.studio.conftest import World

CLUSTER = {"cpus": 4.0, "gpus": 0.0, "memory_gb": 16.0}


def req(cpus: float = 1.0, gpus: float = 0.0, memory_gb: float = 1.0) -> dict[str, float]:
    return {"cpus": cpus, "gpus": gpus, "memory_gb": memory_gb}


def make_run(world: World, name: str, status: str = "queued", priority: int = 0, **res: float):
    return Run.objects.create(
        project=world.project,
        name=name,
        config={},
        status=status,
        priority=priority,
        resources=req(**res),
        created_by=world.owner,
    )


def by_run(plan: QueuePlan) -> dict[int, QueueEntry]:
    return {e.run_id: e for e in plan.entries}


def test_a_projects_runs_start_in_order_and_the_first_that_does_not_fit_holds_up_the_rest():
    queued = [  # all of one project
        QueuedRun(1, req(cpus=2)),
        QueuedRun(2, req(cpus=2)),
        QueuedRun(3, req(cpus=1)),
        QueuedRun(4, req(cpus=1)),
    ]
    plan = plan_queue(queued, free=req(cpus=3, memory_gb=16), total=CLUSTER).entries

    assert [(e.run_id, e.verdict) for e in plan] == [
        (1, "starts"),
        (2, "waits"),
        (3, "waits"),  # would fit, but its project's run 2 is ahead of it
        (4, "waits"),
    ]
    assert plan[1].waiting_for == "2 CPUs (1.0 free)"
    assert plan[2].waiting_for == "run 2, ahead of it in its project's queue, to start"
    assert [e.position for e in plan] == [1, 2, 3, 4]


def test_a_run_larger_than_the_whole_cluster_is_skipped_not_blocking():
    queued = [QueuedRun(1, req(cpus=1, gpus=2)), QueuedRun(2, req(cpus=1))]
    plan = by_run(plan_queue(queued, free=CLUSTER, total=CLUSTER))

    assert plan[1].verdict == "too-large"
    assert plan[1].waiting_for == "2 GPUs (0.0 in the cluster)"
    assert plan[1].position == 2  # after every run that could start
    assert plan[2].verdict == "starts"


def test_shortfall_names_every_missing_resource():
    text = shortfall(req(cpus=1, gpus=1, memory_gb=8), req(cpus=0.5, memory_gb=2), "free")
    assert text == "1 CPU (0.5 free), 1 GPU (0.0 free), 8 GiB of memory (2.0 free)"
    assert shortfall(req(cpus=0.1 + 0.2), req(cpus=0.3), "free") == ""  # float sums


def test_free_is_the_smaller_of_our_bookkeeping_and_rays_report():
    cluster = ClusterResources(total=CLUSTER, available=req(cpus=3, memory_gb=16))
    # We hold 2 CPUs (one of our jobs is not placed yet); someone else uses 1 more.
    held = req(cpus=2, memory_gb=1)
    assert free_for_runs(cluster, held) == {"cpus": 2.0, "gpus": 0.0, "memory_gb": 15.0}
    busy = ClusterResources(total=CLUSTER, available=req(cpus=0.5, memory_gb=16))
    assert free_for_runs(busy, held)["cpus"] == 0.5


def test_queued_runs_are_ordered_by_priority_then_age(world: World):
    old = make_run(world, "old", priority=1)
    new = make_run(world, "new", priority=1)
    urgent = make_run(world, "urgent", priority=5)
    make_run(world, "running", status="running", priority=9)
    Run.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(hours=1))

    assert [queued.run_id for queued in queued_runs()] == [urgent.pk, old.pk, new.pk]


def test_starting_running_and_cancelling_runs_hold_their_request(world: World):
    for status in ("starting", "running", "cancelling", "queued", "succeeded", "failed"):
        make_run(world, status, status=status, cpus=1.5)
    assert held_by_active_runs()["cpus"] == pytest.approx(4.5)


@pytest.fixture
def redis_snapshot(settings):
    settings.RLSTUDIO_RECONCILE_INTERVAL_S = 1.0
    yield
    save_snapshot(Snapshot({}, {}, 0.0))  # stale: the next test starts with no fresh view


def test_the_api_shows_a_queued_runs_position_and_what_it_waits_for(world: World, redis_snapshot):
    make_run(world, "holder", status="running", cpus=3)
    first = make_run(world, "first", priority=2, cpus=2)
    second = make_run(world, "second", priority=1, cpus=1)
    save_snapshot(Snapshot(CLUSTER, req(cpus=1, memory_gb=15), time.time()))

    listed = world.client("viewer").get("/api/runs/?status=queued").json()["results"]
    shown = {r["name"]: (r["queue_position"], r["waiting_for"]) for r in listed}
    assert shown == {
        "first": (1, "2 CPUs (1.0 free)"),
        "second": (2, f"run {first.pk}, ahead of it in its project's queue, to start"),
    }
    detail = world.client("viewer").get(f"/api/runs/{second.pk}/").json()
    assert detail["queue_position"] == 2
    running = world.client("viewer").get("/api/runs/?status=running").json()["results"]
    assert running[0]["queue_position"] is None
    assert running[0]["waiting_for"] is None


def test_without_a_fresh_cluster_view_a_queued_run_says_the_scheduler_is_silent(
    world: World, redis_snapshot
):
    run = make_run(world, "lonely")
    save_snapshot(Snapshot(CLUSTER, CLUSTER, time.time() - 3600))
    assert "is Celery beat running?" in queue_view()[run.pk].waiting_for
    save_snapshot(Snapshot({}, {}, time.time(), error="Ray is unreachable: refused"))
    assert queue_view()[run.pk].waiting_for == "the cluster (Ray is unreachable: refused)"


def test_a_project_at_its_cap_waits_without_holding_up_other_projects():
    # Project 7 holds 2 jobs already; with a cap of 2 its queued run waits, and the run of
    # project 8 behind it starts (the cap is not a resource shortage: nothing is blocked).
    queued = [QueuedRun(1, req(), 7), QueuedRun(2, req(), 8), QueuedRun(3, req(), 8)]
    running = RunningJobs(by_project={7: 2, 8: 1})
    plan = by_run(plan_queue(queued, CLUSTER, CLUSTER, running, Limits(per_project=2)))

    assert {e.run_id: e.verdict for e in plan.values()} == {1: "waits", 2: "starts", 3: "waits"}
    assert plan[1].waiting_for == "its project's limit of 2 running jobs (2 running)"
    # Run 2 starting brings project 8 to its cap: run 3 waits for the cap, not for room.
    assert plan[3].waiting_for == "its project's limit of 2 running jobs (2 running)"
    # Without a cap the same queue starts everything that fits.
    uncapped = plan_queue(queued, free=CLUSTER, total=CLUSTER, running=running)
    assert sorted(uncapped.starts) == [1, 2, 3]


def test_the_queue_view_shows_the_projects_running_jobs_against_its_cap(
    world: World, redis_snapshot, settings
):
    settings.RLSTUDIO_PROJECT_MAX_RUNNING_JOBS = 1
    make_run(world, "busy", status="running")
    waiting = make_run(world, "waiting")
    save_snapshot(Snapshot(CLUSTER, CLUSTER, time.time()))

    body = world.client("viewer").get("/api/queue/?project=alpha").json()
    assert body["running_jobs"] == 1 and body["max_running_jobs"] == 1
    assert body["queued"] == [
        {
            "id": waiting.pk,
            "name": "waiting",
            "position": 1,
            "waiting_for": "its project's limit of 1 running job (1 running)",
        }
    ]
    assert world.client("outsider").get("/api/queue/?project=alpha").status_code == 404


# --- fair share (studio.runs.fair_share) -------------------------------------------------
def test_the_turn_goes_to_the_user_then_project_with_fewest_running_jobs_whatever_priority():
    # Queued in global priority order; user 1 already runs two jobs, user 2 one.
    queued = [QueuedRun(1, req(), 7, user_id=1), QueuedRun(2, req(), 8, user_id=2)]
    running = RunningJobs(by_project={7: 2, 8: 1}, by_user={1: 2, 2: 1})
    plan = plan_queue(queued, free=req(cpus=1, memory_gb=16), total=CLUSTER, running=running)

    assert plan.starts == [2]
    assert by_run(plan)[1].waiting_for == "1 CPU (0.0 free)"
    assert plan.passed_over == [1]  # run 2 took the CPU it needed


def test_a_run_passed_over_enough_times_reserves_and_smaller_runs_stop_jumping_ahead():
    big = QueuedRun(1, req(cpus=4), 7, user_id=1, passes=3)
    small = QueuedRun(2, req(cpus=1), 8, user_id=2)
    free = req(cpus=2, memory_gb=16)
    plan = plan_queue([big, small], free, CLUSTER, limits=Limits(reserve_after=3))

    assert plan.starts == []
    assert by_run(plan)[1].waiting_for == (
        "4 CPUs (2.0 free); what frees up is held for it until it fits"
    )
    assert by_run(plan)[2].waiting_for == (
        "1 CPU (0.0 free); what is free is held for a run that has waited longer"
    )
    assert plan.passed_over == []  # nobody took anything: no pass counted
    # One pass short of reserving, the small run still goes ahead (and that is a pass).
    one_short = replace(big, passes=2)
    early = plan_queue([one_short, small], free, CLUSTER, limits=Limits(reserve_after=3))
    assert early.starts == [2] and early.passed_over == [1]


def test_runs_that_take_none_of_what_a_run_lacks_do_not_pass_it_over():
    gpu_run = QueuedRun(1, req(cpus=1, gpus=1), 7, user_id=1)
    cpu_run = QueuedRun(2, req(cpus=1), 8, user_id=2)
    plan = plan_queue([gpu_run, cpu_run], free=req(cpus=4, memory_gb=16), total=req(4, 1, 16))
    assert plan.starts == [2] and plan.passed_over == []


def test_a_user_at_their_cap_waits_without_holding_up_their_projects_other_members():
    queued = [QueuedRun(1, req(), 7, user_id=1), QueuedRun(2, req(), 7, user_id=2)]
    running = RunningJobs(by_project={7: 1}, by_user={1: 1})
    plan = plan_queue(queued, CLUSTER, CLUSTER, running, Limits(per_user=1))

    assert plan.starts == [2]
    assert by_run(plan)[1].waiting_for == "its creator's limit of 1 running job"


@examples(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(0, 4)),
        max_size=12,
    ),
    st.integers(0, 6),
    st.integers(0, 3),
    st.integers(0, 2),
)
def test_a_plan_never_overcommits_never_passes_a_cap_and_names_only_its_projects_runs(
    rows: list[tuple[int, int, int]], free_cpus: int, cap: int, reserve_after: int
):
    queued = [
        QueuedRun(run_id, req(cpus=cpus), project, user_id=project % 2, passes=passes)
        for run_id, (project, cpus, passes) in enumerate(rows, start=1)
    ]
    project_of = {run.run_id: run.project_id for run in queued}
    limits = Limits(per_project=cap, per_user=cap, reserve_after=reserve_after)
    plan = plan_queue(queued, req(cpus=free_cpus, memory_gb=16), req(4, 0, 16), limits=limits)

    started = [run for run in queued if run.run_id in plan.starts]
    assert sum(run.request["cpus"] for run in started) <= free_cpus
    for key in ("project_id", "user_id"):
        counts = Counter(getattr(run, key) for run in started)
        assert not cap or max(counts.values(), default=0) <= cap
    assert sorted(e.position for e in plan.entries) == list(range(1, len(queued) + 1))
    for entry in plan.entries:
        for named in re.findall(r"run (\d+)", entry.waiting_for):
            assert project_of[int(named)] == project_of[entry.run_id]

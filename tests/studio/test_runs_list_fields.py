"""What a runs list shows per run: duration and a reward sparkline, without N+1 queries."""

from __future__ import annotations

from datetime import timedelta

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from studio.projects.models import Project
from studio.runs.models import Run, RunStatus
from studio.telemetry.models import MetricPoint
from studio.telemetry.series.sparklines import SPARKLINE_KEY, SPARKLINE_POINTS, shrink


def make_run(project: Project, name: str, rewards: dict[int, float]) -> Run:
    run = Run.objects.create(project=project, name=name, config={}, created_by=project.created_by)
    MetricPoint.objects.bulk_create(
        MetricPoint(run=run, attempt=1, seq=step, step=step, key=SPARKLINE_KEY, value=value)
        for step, value in rewards.items()
    )
    return run


def listed(client) -> dict[str, dict]:
    response = client.get("/api/runs/")
    assert response.status_code == 200, response.content
    return {run["name"]: run for run in response.json()["results"]}


def test_each_listed_run_has_a_short_reward_sparkline_of_its_curve(world):
    make_run(world.project, "long", {step: step / 2000 for step in range(2000)})
    make_run(world.project, "short", {1: 0.1, 2: 0.5, 3: 0.2})
    make_run(world.project, "fresh", {})

    runs = listed(world.client("viewer"))

    long = runs["long"]["reward_sparkline"]
    assert 16 <= len(long) <= SPARKLINE_POINTS
    assert long == sorted(long) and long[0] < 0.05 and long[-1] > 0.95  # a rising curve
    assert runs["short"]["reward_sparkline"] == [0.1, 0.5, 0.2]
    assert runs["fresh"]["reward_sparkline"] == []


def test_the_sparklines_of_a_page_cost_the_same_queries_for_one_run_or_many(world):
    client = world.client("viewer")
    make_run(world.project, "first", {step: 0.5 for step in range(300)})
    listed(client)  # warm the token lookup paths
    with CaptureQueriesContext(connection) as one:
        listed(client)
    for i in range(5):
        make_run(world.project, f"more-{i}", {step: 0.5 for step in range(300)})
    with CaptureQueriesContext(connection) as six:
        assert len(listed(client)) == 6
    assert len(six.captured_queries) == len(one.captured_queries)


def test_duration_runs_from_start_to_finish_and_is_null_before_a_start(world):
    start = timezone.now() - timedelta(minutes=10)
    finished = make_run(world.project, "finished", {})
    Run.objects.filter(pk=finished.pk).update(
        status=RunStatus.SUCCEEDED, started_at=start, finished_at=start + timedelta(seconds=90)
    )
    make_run(world.project, "queued", {})

    runs = listed(world.client("viewer"))

    assert runs["finished"]["duration_s"] == 90.0
    assert runs["queued"]["duration_s"] is None


def test_shrink_averages_consecutive_slices_and_keeps_short_series_whole():
    assert shrink([1.0, 2.0, 3.0]) == [1.0, 2.0, 3.0]
    assert shrink([1.0, 3.0, 5.0, 7.0], points=2) == [2.0, 6.0]
    assert len(shrink([float(i) for i in range(100)])) == SPARKLINE_POINTS

"""Metric keys, downsampled series queries and CSV export."""

from __future__ import annotations

import csv
import io
import math
import random

import pytest
from django.http import StreamingHttpResponse

from studio.projects.models import Project
from studio.runs.models import Run
from studio.telemetry.models import MetricPoint, MetricTile
from studio.telemetry.series import TILE_SIZES, bucket_points, buckets_for, plan


def make_run(project: Project, name: str = "run") -> Run:
    return Run.objects.create(project=project, name=name, config={}, created_by=project.created_by)


def add_series(run: Run, key: str, values: dict[int, float], attempt: int = 1, **fields) -> None:
    MetricPoint.objects.bulk_create(
        MetricPoint(run=run, attempt=attempt, seq=step, step=step, key=key, value=value, **fields)
        for step, value in values.items()
    )


def spiky(steps: int, spikes: dict[int, float], seed: int = 0) -> dict[int, float]:
    rng = random.Random(seed)
    values = {step: rng.uniform(0.0, 1.0) for step in range(steps)}
    values.update(spikes)
    return values


def query(client, **params):
    return client.get("/api/metrics/query", params)


@pytest.fixture
def run(world) -> Run:
    return make_run(world.project)


def test_downsampling_keeps_the_global_min_and_max_of_a_spiky_series_and_returns_at_most_points(
    world, run
):
    add_series(run, "critic/score/mean", spiky(5000, {1234: 50.0, 4321: -40.0}))
    response = query(world.client("viewer"), runs=run.pk, keys="critic/score/mean", points=100)
    assert response.status_code == 200
    (series,) = response.json()["series"]
    assert series["run"] == run.pk
    assert series["total"] == 5000
    assert series["downsampled"] is True
    assert len(series["steps"]) <= 100
    points = dict(zip(series["steps"], series["values"], strict=True))
    assert points[1234] == 50.0
    assert points[4321] == -40.0
    assert series["steps"][0] == 0
    assert series["steps"][-1] == 4999
    assert series["steps"] == sorted(series["steps"])


def test_every_bucket_keeps_its_own_extremes(world, run):
    # A spike in every stretch of 500 steps, alternating up and down: none may be lost.
    spikes = {step: (10.0 if i % 2 else -10.0) for i, step in enumerate(range(250, 20000, 500))}
    add_series(run, "actor/entropy", spiky(20000, spikes, seed=1))
    series = query(world.client("member"), runs=run.pk, keys="actor/entropy", points=200).json()
    (only,) = series["series"]
    points = dict(zip(only["steps"], only["values"], strict=True))
    assert len(points) <= 200
    assert all(points.get(step) == value for step, value in spikes.items())


def test_the_bucket_grid_names_each_points_bucket_and_its_true_extremes(world, run):
    # What a chart's min/max band is drawn from: grouped by the grid the answer names,
    # each bucket holds its lowest and highest live point (plus the series' two ends).
    values = spiky(20000, {777: 9.0, 15000: -9.0}, seed=2)
    add_series(run, "actor/grad_norm", values)
    (s,) = query(world.client("member"), runs=run.pk, keys="actor/grad_norm", points=300).json()[
        "series"
    ]
    origin, width = s["bucket_origin"], s["bucket_width"]
    assert s["downsampled"] is True
    assert width > 1
    buckets: dict[int, list[float]] = {}
    for step, value in zip(s["steps"], s["values"], strict=True):
        buckets.setdefault((step - origin) // width, []).append(value)
    for bucket, picked in buckets.items():
        inside = [v for step, v in values.items() if (step - origin) // width == bucket]
        assert min(picked) == min(inside)
        assert max(picked) == max(inside)
        assert len(picked) <= 3  # low, high, and the series' first or last point


def test_a_series_that_fits_is_returned_unchanged(world, run):
    values = {step * 10: float(step) for step in range(50)}
    add_series(run, "actor/pg_loss", values)
    (series,) = query(world.client("member"), runs=run.pk, keys="actor/pg_loss").json()["series"]
    assert series["downsampled"] is False
    assert dict(zip(series["steps"], series["values"], strict=True)) == values


def test_step_range_filter_limits_every_series(world, run):
    add_series(run, "a", {step: float(step) for step in range(1000)})
    add_series(run, "b", {step: -float(step) for step in range(1000)})
    body = query(
        world.client("member"), runs=run.pk, keys="a,b", step_min=100, step_max=199, points=1000
    ).json()
    assert [s["key"] for s in body["series"]] == ["a", "b"]
    for series in body["series"]:
        assert series["total"] == 100
        assert series["steps"] == list(range(100, 200))


def test_superseded_points_are_left_out(world, run):
    add_series(run, "a", {0: 1.0, 1: 2.0, 2: 99.0}, attempt=1)
    MetricPoint.objects.filter(run=run, step=2).update(superseded=True)
    add_series(run, "a", {2: 3.0}, attempt=2)
    (series,) = query(world.client("member"), runs=run.pk, keys="a").json()["series"]
    assert series["values"] == [1.0, 2.0, 3.0]


def test_several_runs_come_back_as_separate_series_and_nan_is_null(world, run):
    other = make_run(world.project, "other")
    add_series(run, "a", {0: 1.0, 1: math.nan})
    add_series(other, "a", {0: 5.0})
    body = query(world.client("member"), runs=f"{other.pk},{run.pk}", keys="a,missing").json()
    got = {(s["run"], s["key"]): s["values"] for s in body["series"]}
    assert got == {(run.pk, "a"): [1.0, None], (other.pk, "a"): [5.0]}


def test_another_projects_run_is_404_and_never_partially_returned(world, run):
    theirs = make_run(world.other_project, "theirs")
    add_series(run, "a", {0: 1.0})
    add_series(theirs, "a", {0: 2.0})
    member = world.client("member")
    response = query(member, runs=f"{run.pk},{theirs.pk}", keys="a")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert "series" not in response.json()
    assert member.get(f"/api/runs/{theirs.pk}/metrics/keys").status_code == 404
    assert member.get(f"/api/runs/{theirs.pk}/metrics.csv").status_code == 404
    assert query(world.client("outsider"), runs=theirs.pk, keys="a").status_code == 200
    assert query(world.client(None), runs=run.pk, keys="a").status_code in (401, 403)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"keys": "a"}, "runs"),
        ({"runs": "1"}, "keys"),
        ({"runs": "1,x", "keys": "a"}, "runs"),
        ({"runs": ",".join(str(i) for i in range(1, 22)), "keys": "a"}, "runs"),
        ({"runs": "1", "keys": ",".join(f"k{i}" for i in range(101))}, "keys"),
        ({"runs": "1", "keys": "a", "points": 9}, "points"),
        ({"runs": "1", "keys": "a", "points": 5001}, "points"),
        ({"runs": "1", "keys": "a", "step_min": -1}, "step_min"),
        ({"runs": "1", "keys": "a", "step_min": 10, "step_max": 5}, "step_min"),
    ],
)
def test_out_of_bounds_queries_are_400_naming_the_parameter(world, params, field):
    response = query(world.client("member"), **params)
    assert response.status_code == 400
    body = response.json()["error"]
    assert body["code"] == "validation_error"
    assert field in body["fields"]
    assert body["message"].startswith(f"{field}:")


def test_metric_keys_lists_the_live_keys_sorted(world, run):
    add_series(run, "timing_s/gen", {0: 1.0})
    add_series(run, "actor/entropy", {0: 1.0, 1: 2.0})
    add_series(run, "critic/score/mean", {5: 1.0})
    add_series(run, "old/key", {9: 1.0}, superseded=True)
    response = world.client("viewer").get(f"/api/runs/{run.pk}/metrics/keys")
    assert response.status_code == 200
    assert response.json() == {
        "run": run.pk,
        "keys": ["actor/entropy", "critic/score/mean", "timing_s/gen"],
    }


def test_csv_export_streams_step_key_value_rows(world, run):
    add_series(run, "b", {0: 0.5, 1: 1.5})
    add_series(run, "a", {1: 2.0, 0: 1.0})
    add_series(run, "c", {0: 9.0})
    response = world.client("viewer").get(f"/api/runs/{run.pk}/metrics.csv", {"keys": "a,b"})
    assert response.status_code == 200
    assert isinstance(response, StreamingHttpResponse)
    assert response["Content-Type"].startswith("text/csv")
    assert f"run-{run.pk}-metrics.csv" in response["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows == [
        ["step", "key", "value"],
        ["0", "a", "1.0"],
        ["1", "a", "2.0"],
        ["0", "b", "0.5"],
        ["1", "b", "1.5"],
    ]
    everything = world.client("viewer").get(f"/api/runs/{run.pk}/metrics.csv", {"step_min": 1})
    body = b"".join(everything.streaming_content).decode().splitlines()
    assert body == ["step,key,value", "1,a,2.0", "1,b,1.5"]


def live_tiles_from_points(run: Run) -> set[tuple]:
    """What MetricTile must hold, computed in Python from the live points."""
    tiles: dict[tuple, list[tuple[float, int]]] = {}
    for step, key, value in MetricPoint.objects.filter(run=run, superseded=False).values_list(
        "step", "key", "value"
    ):
        for size in TILE_SIZES:
            tiles.setdefault((key, size, step // size), []).append((value, step))
    return {
        (key, size, tile, len(pts), min(pts)[1], min(pts)[0], max(pts)[1], max(pts)[0])
        for (key, size, tile), pts in tiles.items()
    }


def stored_tiles(run: Run) -> set[tuple]:
    fields = ["key", "size", "tile", "n", "min_step", "min_value", "max_step", "max_value"]
    return set(MetricTile.objects.filter(run=run).values_list(*fields))


def test_tiles_stay_exact_through_batches_supersedes_and_deletes(world, run):
    rng = random.Random(3)
    steps = list(range(300))
    rng.shuffle(steps)  # out of order, as a replayed spool would send them
    for batch, start in enumerate(range(0, 300, 37)):
        MetricPoint.objects.bulk_create(
            MetricPoint(run=run, attempt=1, seq=step, step=step, key=key, value=rng.gauss(0, 1))
            for step in steps[start : start + 37]
            for key in ("a", "b")
        )
        assert stored_tiles(run) == live_tiles_from_points(run), f"after batch {batch}"
    # A resume at step 200: the first attempt's later points are superseded, then re-sent.
    MetricPoint.objects.filter(run=run, attempt=1, step__gt=200).update(superseded=True)
    assert stored_tiles(run) == live_tiles_from_points(run)
    add_series(run, "a", {step: 5.0 for step in range(201, 250)}, attempt=2)
    assert stored_tiles(run) == live_tiles_from_points(run)
    MetricPoint.objects.filter(run=run, key="b", step__lt=100).delete()
    assert stored_tiles(run) == live_tiles_from_points(run)
    run.delete()
    assert not MetricTile.objects.exists()


def reference(values: dict[int, float], first: int, last: int, points: int) -> list[tuple]:
    """Min/max buckets computed point by point, for comparison with tiles + SQL."""
    inside = sorted((s, v) for s, v in values.items() if first <= s <= last)
    if not inside:
        return []
    p = plan(inside[0][0], inside[-1][0], buckets_for(points))
    buckets: dict[int, list[tuple[float, int]]] = {}
    for step, value in inside:
        buckets.setdefault((step - p.origin) // p.width, []).append((value, step))
    chosen: list[tuple[int, float]] = []
    for bucket in sorted(buckets):
        low, high = min(buckets[bucket]), max(buckets[bucket])
        chosen += bucket_points((low[1], low[0]), (high[1], high[0]))
    if chosen[0] != inside[0]:
        chosen.insert(0, inside[0])
    if chosen[-1] != inside[-1]:
        chosen.append(inside[-1])
    return chosen


@pytest.mark.parametrize("seed", range(6))
def test_downsampling_matches_a_point_by_point_reference(world, run, seed):
    rng = random.Random(seed)
    length = rng.choice([40, 900, 3000, 12000])
    steps = sorted(rng.sample(range(length * 2), length))  # gaps, like logging every k steps
    values = {step: round(rng.gauss(0, 1), 3) for step in steps}  # rounding makes ties
    add_series(run, "k", values)
    points = rng.choice([10, 37, 200, 1000])
    first, last = sorted(rng.sample(range(-5, length * 2 + 5), 2))
    first = max(first, 0)
    body = query(
        world.client("member"),
        runs=run.pk,
        keys="k",
        points=points,
        step_min=first,
        step_max=last,
    ).json()
    expected = reference(values, first, last, points)
    if not expected:
        assert body["series"] == []
        return
    (series,) = body["series"]
    assert list(zip(series["steps"], series["values"], strict=True)) == expected
    assert len(expected) <= points
    assert series["total"] == sum(first <= s <= last for s in values)


@pytest.mark.parametrize(("first", "last", "points"), [(0, 19999, 1000), (5, 130000, 1000)])
def test_tiled_buckets_keep_at_least_two_thirds_of_the_points_asked(first, last, points):
    p = plan(first, last, buckets_for(points))
    assert p.size in TILE_SIZES
    buckets = -(-(last - p.origin + 1) // p.width)
    assert 2 * buckets_for(points) / 1.5 <= 2 * buckets + 2 <= points

"""Rollout review reads: steps, prompts, a prompt's timeline across runs, groups with
their spread, the score histogram, length-vs-score points, and the group filters of
the sample list."""

from __future__ import annotations

import math

import pytest

from studio.runs.models import Run
from tests.studio.test_samples_api import listed, make_run, make_sample


@pytest.fixture
def run(world) -> Run:
    return make_run(world.project)


def get(client, run: Run, view: str, **params):
    response = client.get(f"/api/runs/{run.pk}/rollouts/{view}", params)
    assert response.status_code == 200, response.content
    return response.json()


def test_steps_lists_each_recorded_step_with_its_live_sample_count(world, run):
    for step in (3, 1, 1, 7):
        make_sample(run, step=step)
    make_sample(run, step=9, superseded=True)
    body = get(world.client("viewer"), run, "steps")
    assert body["steps"] == [
        {"step": 1, "samples": 2},
        {"step": 3, "samples": 1},
        {"step": 7, "samples": 1},
    ]


def test_prompts_are_distinct_with_counts_most_sampled_first(world, run):
    a = make_sample(run, prompt="add 1", step=1)
    make_sample(run, prompt="add 1", step=2)
    make_sample(run, prompt="add 1", step=2)
    b = make_sample(run, prompt="add 2", step=5)
    body = get(world.client("viewer"), run, "prompts")
    assert [(p["prompt"], p["samples"], p["steps"]) for p in body["prompts"]] == [
        ("add 1", 3, 2),
        ("add 2", 1, 1),
    ]
    assert body["prompts"][0]["example_sample"] == a.pk
    assert body["prompts"][1]["first_step"] == body["prompts"][1]["last_step"] == 5
    only = get(world.client("viewer"), run, "prompts", q="2")
    assert [p["example_sample"] for p in only["prompts"]] == [b.pk]


def test_timeline_follows_a_prompt_across_steps_and_into_another_run(world, run):
    other = make_run(world.project, "other")
    mine = [make_sample(run, prompt="p", step=s).pk for s in (4, 2)]
    make_sample(run, prompt="q", step=3)
    theirs = make_sample(other, prompt="p", step=9).pk
    client = world.client("viewer")
    body = get(client, run, "timeline", sample=mine[0])
    assert body["prompt"] == "p"
    assert [s["id"] for s in body["samples"]] == [mine[1], mine[0]]  # by step
    across = get(client, other, "timeline", sample=mine[0])
    assert [s["id"] for s in across["samples"]] == [theirs]


def test_timeline_of_another_projects_sample_is_404(world, run):
    outside = make_sample(make_run(world.other_project), prompt="secret")
    response = world.client("owner").get(
        f"/api/runs/{run.pk}/rollouts/timeline", {"sample": outside.pk}
    )
    assert response.status_code == 404
    assert "secret" not in response.content.decode()


def test_groups_report_their_spread_and_filter_by_learning_signal(world, run):
    for score in (1.0, 1.0, 1.0):
        make_sample(run, step=2, group_id="flat", score=score)
    for score in (0.0, 1.0, 0.5):
        make_sample(run, step=2, group_id="mixed", score=score)
    make_sample(run, step=3, group_id="flat", score=0.0)
    client = world.client("viewer")
    groups = {g["group_id"]: g for g in get(client, run, "groups", step=2)["groups"]}
    assert groups["flat"]["zero_spread"] is True
    assert groups["flat"]["score_std"] == 0
    assert groups["mixed"]["zero_spread"] is False
    assert groups["mixed"]["score_min"] == 0.0 and groups["mixed"]["score_max"] == 1.0
    assert groups["mixed"]["samples"] == 3
    learning = get(client, run, "groups", step=2, signal="learning")["groups"]
    assert [g["group_id"] for g in learning] == ["mixed"]
    zero = get(client, run, "groups", step=2, signal="zero")["groups"]
    assert [g["group_id"] for g in zero] == ["flat"]


def test_sample_list_keeps_only_groups_with_a_learning_signal_or_named_groups(world, run):
    flat = [make_sample(run, step=2, group_id="flat", score=1.0).pk for _ in range(2)]
    mixed = [make_sample(run, step=2, group_id="mixed", score=s).pk for s in (0.0, 1.0)]
    lone = make_sample(run, step=2, group_id="lone", score=0.3).pk
    client = world.client("viewer")
    assert sorted(listed(client, run, signal="learning")) == sorted(mixed)
    assert sorted(listed(client, run, signal="zero")) == sorted([*flat, lone])
    assert sorted(listed(client, run, groups="flat,lone")) == sorted([*flat, lone])
    too_many = ",".join(f"g{i}" for i in range(101))
    response = client.get("/api/samples/", {"run": run.pk, "groups": too_many})
    assert response.status_code == 400
    assert "at most 100" in response.content.decode()


def test_histogram_bins_cover_the_score_span_and_count_every_finite_score(world, run):
    for score in (0.0, 0.1, 0.5, 0.9, 1.0, 1.0):
        make_sample(run, step=1, score=score)
    make_sample(run, step=1, score=math.nan)
    make_sample(run, step=8, score=5.0)  # outside the step range asked for
    body = get(world.client("viewer"), run, "histogram", step_max=4, bins=4)
    bins = body["bins"]
    assert [b["count"] for b in bins] == [2, 0, 1, 3]  # [0,.25) [.25,.5) [.5,.75) [.75,1]
    assert bins[0]["low"] == 0.0 and bins[-1]["high"] == 1.0


def test_histogram_of_equal_scores_is_one_bin_and_of_no_samples_is_empty(world, run):
    for _ in range(3):
        make_sample(run, step=1, score=0.5)
    client = world.client("viewer")
    assert get(client, run, "histogram")["bins"] == [{"low": 0.5, "high": 0.5, "count": 3}]
    assert get(client, run, "histogram", step_min=5)["bins"] == []


def test_lengths_give_newest_points_and_mark_truncated_responses(world, run):
    cut = make_sample(run, step=1, response_length=64, finish_reason="length", score=0.0)
    done = make_sample(run, step=2, response_length=10, finish_reason="stop", score=1.0)
    body = get(world.client("viewer"), run, "lengths", limit=5)
    assert body["points"] == [
        {"sample": done.pk, "step": 2, "response_length": 10, "score": 1.0, "truncated": False},
        {"sample": cut.pk, "step": 1, "response_length": 64, "score": 0.0, "truncated": True},
    ]
    assert len(get(world.client("viewer"), run, "lengths", limit=1)["points"]) == 1


@pytest.mark.parametrize(
    ("view", "params"),
    [
        ("groups", {}),
        ("groups", {"step": 1, "signal": "some"}),
        ("histogram", {"bins": 0}),
        ("histogram", {"step_min": 5, "step_max": 1}),
        ("lengths", {"limit": 10**6}),
        ("timeline", {"sample": "x"}),
    ],
)
def test_bad_parameters_are_400_with_the_field_named(world, run, view, params):
    response = world.client("viewer").get(f"/api/runs/{run.pk}/rollouts/{view}", params)
    assert response.status_code == 400
    assert response.json()["error"]["code"]

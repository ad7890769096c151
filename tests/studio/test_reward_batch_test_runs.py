"""Test-runs of a batch reward function (verl's batch signature): saved like any version,
scored per row over pasted completions and dataset rows, with per-row errors exactly like
a per-sample function's, inside the test-run's time budget."""

from __future__ import annotations

import time

import pytest
from django.test import override_settings

from studio.rewards.checks import problems_in
from tests.rewards.conftest import needs_full_sandbox
from tests.rewards.studio_objects import make_dataset_version
from trainer.rewards import builtin_source

needs_sandbox = needs_full_sandbox()

# verl's batch reward manager calls `compute_score` with lists; one row loops forever.
BATCH = """
def compute_score(data_sources, solution_strs, ground_truths, extra_infos, **kwargs):
    scores = []
    for solution, truth in zip(solution_strs, ground_truths):
        while solution == "loop":
            pass
        exact = float(solution.strip() == str(truth).strip())
        scores.append({"score": exact, "exact": exact, "rows": float(len(solution_strs))})
    return scores
"""


def create_function(world, code: str) -> int:
    body = {"project": "alpha", "name": "batch", "code": code}
    response = world.client("member").post("/api/reward-functions/", body, format="json")
    assert response.status_code == 201, response.json()
    return int(response.json()["id"])


def test_the_static_check_accepts_verls_batch_signature_and_explains_a_partial_one():
    assert problems_in(BATCH) == []
    partial = "def compute_score(data_sources, solution_strs):\n    return []\n"
    [problem] = problems_in(partial)
    assert "no argument named 'ground_truths', 'extra_infos'" in problem.message
    assert "verl's batch form" in problem.message


def test_a_batch_form_beside_the_entry_point_is_checked_as_a_batch_function():
    code = (
        "def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n"
        "    return 1.0\n\n"
        "def compute_score_batch(solution_strs, answers):\n"
        "    return []\n"
    )
    messages = [p.message for p in problems_in(code)]
    assert len(messages) == 2 and all("compute_score_batch" in m for m in messages)


def test_the_batch_template_is_listed_and_a_function_starts_from_it(world):
    templates = world.client("viewer").get("/api/reward-templates/").json()
    by_name = {t["name"]: t for t in templates}
    assert by_name["exact_match_batch"]["code"] == builtin_source("exact_match_batch")
    assert by_name["exact_match_batch"]["description"].startswith("Exact match, batch form")
    body = {"project": "alpha", "name": "b", "from_template": "exact_match_batch"}
    created = world.client("member").post("/api/reward-functions/", body, format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["version_count"] == 1


@needs_sandbox
def test_a_batch_function_scores_pasted_rows_and_only_the_looping_row_errors(world):
    function = create_function(world, BATCH)
    completions = [
        {"solution_str": "12", "ground_truth": "12"},
        {"solution_str": "loop", "ground_truth": "1"},
        {"solution_str": "7", "ground_truth": "8"},
    ]
    response = world.client("member").post(
        f"/api/reward-functions/{function}/versions/1/test/",
        {"completions": completions, "timeout_s": 1},
        format="json",
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    rows = body["rows"]
    assert [(r["score"], r["components"]) for r in (rows[0], rows[2])] == [
        (1.0, {"exact": 1.0, "rows": 1.0}),  # scored alone, after the batch call timed out
        (0.0, {"exact": 0.0, "rows": 1.0}),
    ]
    assert rows[0]["error"] == rows[2]["error"] == ""
    assert rows[1]["error"] == (
        "timeout: the call ran longer than 1 s "
        "(scored alone after the batch call of its 3 rows failed)"
    )
    summary = body["summary"]
    assert (summary["scored"], summary["failed"], summary["skipped"]) == (2, 1, 0)
    assert summary["error_rate"] == pytest.approx(1 / 3)
    stored = world.client("viewer").get(f"/api/reward-test-runs/{body['test_run']}/").json()
    assert stored["status"] == "succeeded" and stored["result"]["rows"] == rows


@needs_sandbox
def test_a_batch_function_scores_dataset_rows_in_one_call(world, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path)
    dataset = make_dataset_version(world.project, world.owner, tmp_path, ["1", "2", "3", "4"])
    function = create_function(world, BATCH)
    response = world.client("member").post(
        f"/api/reward-functions/{function}/versions/1/test/",
        {"dataset_version": dataset.pk, "rows": 4, "solution_template": "{ground_truth}"},
        format="json",
    )
    assert response.status_code == 200, response.json()
    rows = response.json()["rows"]
    assert [(r["score"], r["error"]) for r in rows] == [(1.0, "")] * 4
    assert {r["components"]["rows"] for r in rows} == {4.0}  # one batch call for all four


@needs_sandbox
@override_settings(RLSTUDIO_REWARD_TEST_BUDGET_S=4.0)
def test_a_batch_function_looping_on_every_row_stays_within_the_budget(world):
    function = create_function(world, BATCH)
    started = time.monotonic()
    response = world.client("member").post(
        f"/api/reward-functions/{function}/versions/1/test/",
        {"completions": [{"solution_str": "loop", "ground_truth": "1"}] * 20, "timeout_s": 1},
        format="json",
    )
    took = time.monotonic() - started
    assert response.status_code == 200, response.json()
    body = response.json()
    ran = [r for r in body["rows"] if not r["skipped"]]
    assert ran and all(r["error"].startswith("timeout") for r in ran)
    assert body["summary"]["skipped"] == 20 - len(ran) > 0
    # Chunks are sized for the whole call plus every row alone, so the fallback never
    # overruns the budget (the same allowance as the per-sample test's).
    assert took < 4.0 + 1.5

"""A verl-style reward in a studio test-run: each row shows its extra info (the return's
strings, None and lists), and the keyword arguments reach the function (verl's
reward_kwargs). Ingest and export: tests/telemetry/test_ingest_reward_extra.py."""

from __future__ import annotations

from tests.rewards.conftest import needs_full_sandbox

needs_sandbox = needs_full_sandbox()

# verl's DAPO scorer's return shape, plus a list, None, and a keyword argument.
DAPO_STYLE = """
import re


def compute_score(data_source, solution_str, ground_truth, extra_info=None, wrong=-1.0,
                  **kwargs):
    found = re.findall(r"Answer:\\s*(\\S+)", solution_str)
    pred = found[-1] if found else None
    acc = pred == str(ground_truth)
    return {"score": 1.0 if acc else wrong, "acc": acc, "pred": pred, "tried": found,
            "note": None}
"""


def create_function(world, code: str) -> int:
    body = {"project": "alpha", "name": "dapo", "code": code}
    response = world.client("member").post("/api/reward-functions/", body, format="json")
    assert response.status_code == 201, response.json()
    return int(response.json()["id"])


@needs_sandbox
def test_a_test_run_shows_extras_per_row_and_passes_the_keyword_arguments(world):
    function = create_function(world, DAPO_STYLE)
    completions = [
        {"solution_str": "Answer: 42", "ground_truth": "42"},
        {"solution_str": "Answer: 41", "ground_truth": "42"},
        {"solution_str": "no answer", "ground_truth": "42"},
    ]
    response = world.client("member").post(
        f"/api/reward-functions/{function}/versions/1/test/",
        {"completions": completions, "kwargs": {"wrong": -0.5}},
        format="json",
    )
    assert response.status_code == 200, response.json()
    right, wrong, none = response.json()["rows"]
    assert (right["score"], right["components"]) == (1.0, {"acc": 1.0})
    assert right["extra"] == {"pred": "42", "tried": ["42"], "note": None}
    assert (wrong["score"], wrong["extra"]["pred"]) == (-0.5, "41")
    assert (none["score"], none["extra"]) == (-0.5, {"pred": None, "tried": [], "note": None})


def test_a_test_runs_keyword_arguments_are_checked(world):
    function = create_function(world, DAPO_STYLE)
    response = world.client("member").post(
        f"/api/reward-functions/{function}/versions/1/test/",
        {"completions": [{"solution_str": "1", "ground_truth": "1"}], "kwargs": {"x y": 1}},
        format="json",
    )
    assert response.status_code == 400
    assert "not a valid Python argument name" in str(response.json())

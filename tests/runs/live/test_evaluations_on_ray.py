"""Evaluations on the live stack: a run's base model and checkpoints evaluated greedily on
its validation rows by a Ray job, every response stored with its score; cancelling an
evaluation stops its job and leaves no trainer behind."""

from __future__ import annotations

import time
from pathlib import Path

from tests.runs.conftest import TERMINAL, Api, Stack, eventually, tiny_config, trainer_processes


def test_a_runs_base_model_and_last_checkpoint_are_evaluated_and_stored_per_row(
    stack: Stack, api: Api, tiny_assets: Path
) -> None:
    # The least that still has a checkpoint: one step. The browser test
    # (tests/browser/test_evaluations.py) covers several checkpoints, the chart and the
    # explorer; tests/trainer/test_evaluate.py the figures. Here: the Ray job and storage.
    config = tiny_config(tiny_assets, steps=1, checkpoint={"save_every": 1, "keep_last": 1})
    trained = api.create_run("short", config, validation="held_out")
    run = api.wait_status(trained["id"], TERMINAL, 180, stack)
    assert run["status"] == "succeeded", run["last_error"]

    created = api.post(
        "/api/evaluations/run-checkpoints/", {"run": run["id"], "max_prompts": 3}, 201
    )
    assert [m["label"] for m in created["models"]] == ["model", "short @ step 1"]
    evaluation = api.wait_status(created["id"], TERMINAL, 120, stack)
    assert evaluation["status"] == "succeeded", evaluation["last_error"]

    detail = api.get(f"/api/evaluations/{created['id']}/")
    results = detail["results"]
    assert results["progress"] == {"responses": 6, "total": 6, "fraction": 1.0}
    rows = api.get(f"/api/samples/?run={created['id']}&split=eval&page_size=100")["results"]
    assert len(rows) == 6 and {r["step"] for r in rows} == {1, 2}
    # The same three held-out prompts for both models, each scored by the run's reward.
    by_step: dict[int, list[dict]] = {s: [r for r in rows if r["step"] == s] for s in (1, 2)}
    assert len({frozenset(r["group_id"] for r in group) for group in by_step.values()}) == 1
    for model in results["models"]:
        scores = [r["score"] for r in by_step[model["step"]]]
        assert model["scores"]["prompts"] == 3
        assert model["scores"]["mean_score"] == sum(scores) / len(scores)
    base, last = results["models"][0]["scores"], results["models"][-1]["scores"]
    print(f"greedy accuracy: base {base['pass_at_k']:.3f}, step 1 {last['pass_at_k']:.3f}")


def test_cancelling_an_evaluation_stops_its_job_and_leaves_no_trainer(
    stack: Stack, api: Api, tiny_assets: Path
) -> None:
    model = api.model_id("model")
    version = api.dataset_of(tiny_assets / "data" / "arith" / "train.parquet")
    body = {
        "project": api.project.slug,
        "models": [{"model": model}],
        "dataset_version": version,
        "greedy": False,
        "k": 8,
        "max_new_tokens": 64,
    }
    created = api.post("/api/evaluations/", body, 201)
    evaluation_id = created["id"]
    api.wait_status(evaluation_id, {"running"}, 120, stack)
    eventually(lambda: bool(trainer_processes(evaluation_id)), 60, "the trainer process started")
    time.sleep(2)

    started = time.monotonic()
    cancelled = api.post(f"/api/evaluations/{evaluation_id}/cancel/", {})
    assert cancelled["status"] in ("cancelling", "cancelled")
    run = api.wait_status(evaluation_id, TERMINAL, 10, stack)
    assert run["status"] == "cancelled", run
    sid = run["attempts"][0]["submission_id"]
    left = max(0.0, 10 - (time.monotonic() - started))
    eventually(lambda: stack.ray_jobs()[sid].status == "STOPPED", left, "the Ray job stopped")
    eventually(lambda: not trainer_processes(evaluation_id), 2, "no trainer process left")

"""A sweep on the live stack (Ray head, Celery worker and beat, web server, Postgres,
Redis): its trials are trained by the real trainer on the demo model, pruned by ASHA on
the validation score as it streams in, and the worker is killed in the middle.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from studio.runs.models import Run
from studio.sweeps.models import PrunerDecision, SweepTrial, TrialState
from tests.runs.conftest import Api, Stack, eventually, live_stack, project_api

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

EXACT = (
    "def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n"
    "    return float(solution_str.strip() == str(ground_truth).strip())\n"
)
PARTIAL = (
    "def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n"
    "    answer = str(ground_truth).strip()\n"
    "    said = solution_str.strip()\n"
    "    return 1.0 if said == answer else 0.5 * float(bool(said) and said[0] == answer[0])\n"
)
TRIALS = 6


@pytest.fixture(scope="module")
def demo_stack(
    django_db_setup: None, tmp_path_factory: pytest.TempPathFactory, demo_assets: Path
) -> Iterator[Stack]:
    """The stack offering the demo model (warm-started, so trials' scores differ)."""
    yield from live_stack(tmp_path_factory, demo_assets, "", name="sweep")


@pytest.fixture
def api(demo_stack: Stack, transactional_db: None) -> Api:
    return project_api(demo_stack)


def sweep_request(api: Api, demo_assets: Path) -> dict[str, Any]:
    function = api.post(
        "/api/reward-functions/",
        {"project": api.project.slug, "name": "exact", "code": EXACT},
        201,
    )
    second = api.post(f"/api/reward-functions/{function['id']}/versions/", {"code": PARTIAL}, 201)
    return {
        "project": api.project.slug,
        "name": "lr, kl, reward",
        "preset": "grpo-tiny-arith",
        "inputs": {
            "model": api.model_id("model"),
            "dataset_version": api.dataset_of(demo_assets / "data" / "arith" / "train.parquet"),
        },
        # The demo preset, smaller batches: 6 steps, validated every 2 (ASHA's rungs at
        # steps 2 and 4 before the last).
        "overrides": [
            "trainer.total_steps=6",
            "trainer.val_every=2",
            "data.train_batch_size=4",
            "actor.ppo_mini_batch_size=4",
            "rollout.n=4",
            "data.max_val_samples=32",
            "checkpoint.save_hf=false",
            "resources.cpus_per_worker=1",
            "resources.memory_gb=0.25",
        ],
        "space": [
            {"name": "actor.optim.lr", "type": "float", "low": 1e-5, "high": 1e-2, "log": True},
            {"name": "algorithm.kl_ctrl.kl_coef", "type": "float", "low": 0.0, "high": 0.1},
            {
                "name": "reward_version",
                "type": "input",
                "values": [function["latest_version"]["id"], second["id"]],
            },
        ],
        "method": "random",
        "seed": 11,
        "metric_reward": "arith",
        "max_trials": TRIALS,
        "parallelism": 2,
        "pruner": {"kind": "asha", "min_steps": 2, "reduction_factor": 2},
    }


def test_a_seeded_sweep_prunes_on_the_live_stack_and_survives_its_worker_being_killed(
    demo_stack: Stack, api: Api, demo_assets: Path
) -> None:
    body = sweep_request(api, demo_assets)
    started = time.monotonic()
    sweep = api.post("/api/sweeps/", body, 201)
    sweep_id = sweep["id"]

    # Kill the whole worker (parent and children) once a few trials exist, mid-sweep.
    eventually(lambda: SweepTrial.objects.filter(sweep_id=sweep_id).count() >= 3, 120, "3 trials")
    demo_stack.worker.kill()
    demo_stack.restart_worker()

    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        shown = api.get(f"/api/sweeps/{sweep_id}/")
        if shown["status"] == "finished":
            break
        time.sleep(0.5)
    elapsed = time.monotonic() - started
    states = [t["state"] for t in shown["trials"]]
    print(f"sweep of {TRIALS} trials finished in {elapsed:.1f} s: {states}")
    for t in shown["trials"]:
        print(t["number"], t["state"], t["value"], t["stop_reason"], t["intermediate"])
    assert shown["status"] == "finished", (shown, demo_stack.worker.log()[-4000:])

    # Every trial is one run with its inputs; none lost, none made twice.
    trials = shown["trials"]
    assert [t["number"] for t in trials] == list(range(TRIALS))
    runs = {r.pk: r for r in Run.objects.filter(tags__contains=[f"sweep-{sweep_id}"])}
    assert sorted(runs) == sorted(t["run"]["id"] for t in trials)
    versions = set(body["space"][2]["values"])
    for trial in trials:
        run = runs[trial["run"]["id"]]
        assert run.reward_version_id == trial["params"]["reward_version"] in versions
        assert run.config["actor"]["optim"]["lr"] == trial["params"]["actor.optim.lr"]
        assert run.config["reward"]["validation_function"] == "arith"
        # A learning rate near 1e-2 can make a run collapse: stopped on its critical alert.
        assert trial["state"] in {"complete", "pruned", "stopped"}, trial
        if trial["state"] == "stopped":
            assert "critical alert" in trial["stop_reason"], trial
    # ASHA stopped at least one, as its recorded decisions say, and the trial shows where.
    pruned = PrunerDecision.objects.filter(trial__sweep_id=sweep_id, pruned=True)
    assert pruned.exists()
    for decision in pruned.select_related("trial"):
        assert decision.trial.state == TrialState.PRUNED
        assert decision.trial.stopped_at_step == decision.step
        assert f"at step {decision.step}" in decision.trial.stop_reason
    # The best trial is the complete one with the best validation score.
    complete = [t for t in trials if t["state"] == "complete"]
    best = max(complete, key=lambda t: (t["value"], -t["number"]))
    assert shown["best"]["number"] == best["number"]
    assert shown["best_trial"]["value"] == max(t["value"] for t in complete)

"""Sweeps over the API and the driver's passes, with trials' runs stored but not trained:
their metric points are written as a trainer's ingest would write them."""

from __future__ import annotations

from typing import Any

import pytest
from django.db.models import ProtectedError
from rest_framework.test import APIClient

from studio.runs.models import Run, RunStatus
from studio.sweeps.driver import advance
from studio.sweeps.models import PrunerDecision, Sweep, SweepStatus, SweepTrial, TrialState
from studio.telemetry.models import MetricPoint, RunAlert
from tests.studio.conftest import World

REWARD = (
    "def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    return {}\n"
)
SCORE_KEY = "val-core/counting/reward/mean@1"


def reward_versions(member: APIClient) -> list[int]:
    made = member.post(
        "/api/reward-functions/",
        {"project": "alpha", "name": "exact", "code": REWARD.format(1.0)},
        format="json",
    ).json()
    second = member.post(
        f"/api/reward-functions/{made['id']}/versions/",
        {"code": REWARD.replace("{}", "0.5")},
        format="json",
    ).json()
    return [made["latest_version"]["id"], second["id"]]


def sweep_body(version: Any, versions: list[int], **changes: Any) -> dict[str, Any]:
    body = {
        "project": "alpha",
        "name": "lr, kl and reward",
        "preset": "grpo-tiny-arith",
        "inputs": {"dataset_version": version.pk},
        "overrides": ["trainer.total_steps=8", "trainer.val_every=2"],
        "space": [
            {"name": "actor.optim.lr", "type": "float", "low": 1e-5, "high": 1e-3, "log": True},
            {"name": "algorithm.kl_ctrl.kl_coef", "type": "float", "low": 0.0, "high": 0.1},
            {"name": "reward_version", "type": "input", "values": versions},
        ],
        "method": "random",
        "seed": 7,
        "metric_reward": "exact_match",
        "max_trials": 4,
        "parallelism": 2,
        "pruner": {"kind": "asha", "min_steps": 2, "reduction_factor": 2},
    }
    return body | changes


def report(run: Run, points: dict[int, float]) -> None:
    """Validation scores at steps, as the trainer's ingest stores them."""
    MetricPoint.objects.bulk_create(
        MetricPoint(run=run, attempt=1, seq=step, step=step, key=SCORE_KEY, value=value)
        for step, value in points.items()
    )


def end(run: Run, status: str = RunStatus.SUCCEEDED) -> None:
    Run.objects.filter(pk=run.pk).update(status=status)


@pytest.fixture
def versions(member: APIClient) -> list[int]:
    return reward_versions(member)


def test_a_sweep_queues_its_first_trials_as_runs_with_their_parameters(
    member: APIClient, version: Any, versions: list[int]
) -> None:
    response = member.post("/api/sweeps/", sweep_body(version, versions), format="json")
    assert response.status_code == 201, response.json()
    sweep = Sweep.objects.get(pk=response.json()["id"])
    advance(sweep.pk)
    advance(sweep.pk)  # the same pass again (a task delivered twice) adds nothing
    trials = list(sweep.trials.select_related("run").order_by("number"))
    assert [t.number for t in trials] == [0, 1]  # two at a time
    for trial in trials:
        run = trial.run
        assert run is not None and run.status == RunStatus.QUEUED
        assert 1e-5 <= trial.params["actor.optim.lr"] <= 1e-3
        assert run.config["actor"]["optim"]["lr"] == trial.params["actor.optim.lr"]
        assert (
            run.config["algorithm"]["kl_ctrl"]["kl_coef"]
            == (trial.params["algorithm.kl_ctrl.kl_coef"])
        )
        assert run.reward_version_id == trial.params["reward_version"]
        assert run.config["reward"]["validation_function"] == "exact_match"
        assert run.config["trainer"]["total_steps"] == 8
        assert f"sweep-{sweep.pk}" in run.tags
    detail = member.get(f"/api/sweeps/{sweep.pk}/").json()
    assert [t["run"]["id"] for t in detail["trials"]] == [t.run_id for t in trials]
    assert detail["metric_label"] == "validation score"
    assert detail["grid_size"] is None and detail["best_trial"] is None


def test_the_pruner_stops_a_losing_trial_through_the_cancel_path_and_records_why(
    member: APIClient, version: Any, versions: list[int]
) -> None:
    sweep_id = member.post("/api/sweeps/", sweep_body(version, versions), format="json").json()[
        "id"
    ]
    advance(sweep_id)
    first, second = SweepTrial.objects.filter(sweep_id=sweep_id).order_by("number")
    assert first.run is not None and second.run is not None
    report(first.run, {0: 0.1, 2: 0.6, 4: 0.7, 6: 0.8, 8: 0.9})
    end(first.run)
    advance(sweep_id)
    first.refresh_from_db()
    assert first.state == TrialState.COMPLETE and first.value == 0.9
    Run.objects.filter(pk=second.run.pk).update(status=RunStatus.RUNNING)
    report(second.run, {0: 0.1, 2: 0.2})  # below the first at the first rung
    advance(sweep_id)
    second.refresh_from_db()
    assert second.state == TrialState.PRUNED and second.stopped_at_step == 2
    assert "pruned by ASHA at step 2" in second.stop_reason
    decisions = list(PrunerDecision.objects.filter(trial=second).values_list("step", "pruned"))
    assert decisions == [(0, False), (2, True)]
    assert Run.objects.get(pk=second.run.pk).status == RunStatus.CANCELLING
    # Two slots freed: the next trials are asked for; the budget is 4.
    assert SweepTrial.objects.filter(sweep_id=sweep_id).count() == 4
    detail = member.get(f"/api/sweeps/{sweep_id}/").json()
    assert detail["best"] == {"number": 0, "run": first.run.pk, "value": 0.9}
    changed = {c["path"] for c in detail["best_trial"]["config_diff"]}
    assert {"actor.optim.lr", "algorithm.kl_ctrl.kl_coef", "reward.function"} <= changed
    assert "reward.validation_function" not in changed  # every trial's, and the base's
    assert detail["trials"][1]["intermediate"] == [[0, 0.1], [2, 0.2]]


def test_a_sweep_finishes_when_its_budget_has_ended_and_adding_trials_runs_it_again(
    member: APIClient, version: Any, versions: list[int]
) -> None:
    body = sweep_body(version, versions, max_trials=2, pruner={"kind": "none"})
    sweep_id = member.post("/api/sweeps/", body, format="json").json()["id"]
    advance(sweep_id)
    for i, trial in enumerate(SweepTrial.objects.filter(sweep_id=sweep_id)):
        assert trial.run is not None
        report(trial.run, {8: 0.5 + i / 10})
        end(trial.run)
    advance(sweep_id)
    sweep = Sweep.objects.get(pk=sweep_id)
    assert sweep.status == SweepStatus.FINISHED
    assert not PrunerDecision.objects.filter(trial__sweep=sweep).exists()
    added = member.post(f"/api/sweeps/{sweep_id}/trials/", {"count": 1}, format="json")
    assert added.status_code == 200 and added.json()["status"] == "running"
    advance(sweep_id)
    assert SweepTrial.objects.filter(sweep_id=sweep_id).count() == 3


def test_pause_resume_and_stop(member: APIClient, version: Any, versions: list[int]) -> None:
    sweep_id = member.post("/api/sweeps/", sweep_body(version, versions), format="json").json()[
        "id"
    ]
    advance(sweep_id)
    assert member.post(f"/api/sweeps/{sweep_id}/pause/").json()["status"] == "paused"
    assert member.post(f"/api/sweeps/{sweep_id}/pause/").status_code == 409
    for trial in SweepTrial.objects.filter(sweep_id=sweep_id):
        assert trial.run is not None
        end(trial.run)
        report(trial.run, {8: 0.5})
    advance(sweep_id)  # paused: no new trials
    assert SweepTrial.objects.filter(sweep_id=sweep_id).count() == 2
    assert member.post(f"/api/sweeps/{sweep_id}/resume/").json()["status"] == "running"
    advance(sweep_id)
    assert SweepTrial.objects.filter(sweep_id=sweep_id).count() == 4
    stopped = member.post(f"/api/sweeps/{sweep_id}/stop/").json()
    assert stopped["status"] == "stopped"
    live = [t for t in stopped["trials"] if t["number"] >= 2]
    assert {t["state"] for t in live} == {"stopped"}
    assert {t["run"]["status"] for t in live} == {"cancelled"}  # queued: cancelled at once


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"metric_reward": ""}, "metric_reward", "reward versions"),
        ({"parallelism": 9}, "parallelism", "RLSTUDIO_PROJECT_MAX_RUNNING_JOBS"),
        ({"method": "grid"}, "space", "float range"),
        (
            {"space": [{"name": "actor.optim.nope", "type": "float", "low": 0, "high": 1}]},
            "space",
            "not a key of the run config",
        ),
        (
            {
                "space": [
                    {"name": "actor.optim.lr", "type": "float", "low": 0, "high": 1, "log": True}
                ]
            },
            "space",
            "log scale",
        ),
        (
            {"space": [{"name": "data.train_batch_size", "type": "int", "low": 1, "high": 64}]},
            "space",
            "ppo_mini_batch_size",
        ),
        (
            {"space": [{"name": "reward_version", "type": "input", "values": [999999]}]},
            "space",
            "999999",
        ),
        ({"preset": "", "inputs": {}}, "base_run", "preset"),
    ],
)
def test_a_sweep_that_cant_run_is_refused_with_the_field_and_the_reason(
    member: APIClient,
    version: Any,
    versions: list[int],
    changes: dict[str, Any],
    field: str,
    words: str,
) -> None:
    response = member.post("/api/sweeps/", sweep_body(version, versions, **changes), format="json")
    assert response.status_code == 400, response.json()
    assert words in " ".join(response.json()["error"]["fields"][field]), response.json()
    assert not Sweep.objects.exists()


def test_only_members_create_and_act_and_outsiders_see_nothing(
    world: World, version: Any, versions: list[int]
) -> None:
    viewer = world.client("viewer")
    assert (
        viewer.post("/api/sweeps/", sweep_body(version, versions), format="json").status_code == 403
    )
    sweep_id = (
        world.client("member")
        .post("/api/sweeps/", sweep_body(version, versions), format="json")
        .json()["id"]
    )
    assert viewer.get(f"/api/sweeps/{sweep_id}/").status_code == 200
    assert viewer.post(f"/api/sweeps/{sweep_id}/stop/").status_code == 403
    outsider = world.client("outsider")
    assert outsider.get(f"/api/sweeps/{sweep_id}/").status_code == 404
    assert outsider.get("/api/sweeps/").json()["count"] == 0


def alert(run: Run, kind: str, step: int) -> None:
    RunAlert.objects.create(
        run=run, attempt=1, seq=step, step=step, kind=kind, severity="critical", message="!"
    )


def test_a_critical_reward_hacking_alert_stops_a_trial_and_a_run_without_spread_goes_on(
    member: APIClient, version: Any, versions: list[int]
) -> None:
    body = sweep_body(version, versions, pruner={"kind": "none"})
    sweep_id = member.post("/api/sweeps/", body, format="json").json()["id"]
    advance(sweep_id)
    hacked, flat = SweepTrial.objects.filter(sweep_id=sweep_id).order_by("number")
    assert hacked.run is not None and flat.run is not None
    Run.objects.filter(pk__in=[hacked.run.pk, flat.run.pk]).update(status=RunStatus.RUNNING)
    alert(hacked.run, "response_length_drift", 3)
    alert(flat.run, "zero_spread_groups", 3)
    advance(sweep_id)
    hacked.refresh_from_db()
    flat.refresh_from_db()
    assert hacked.state == TrialState.STOPPED and hacked.stopped_at_step == 3
    assert "critical alert (Response length drift)" in hacked.stop_reason
    assert Run.objects.get(pk=hacked.run.pk).status == RunStatus.CANCELLING
    assert flat.state == TrialState.RUNNING


def test_the_last_step_is_a_trials_result_not_a_point_to_prune_at(
    member: APIClient, version: Any, versions: list[int]
) -> None:
    sweep_id = member.post("/api/sweeps/", sweep_body(version, versions), format="json").json()[
        "id"
    ]
    advance(sweep_id)
    first, second = SweepTrial.objects.filter(sweep_id=sweep_id).order_by("number")
    assert first.run is not None and second.run is not None
    report(first.run, {2: 0.5, 4: 0.6, 8: 0.9})
    advance(sweep_id)
    report(second.run, {2: 0.5, 4: 0.6, 8: 0.1})  # worse at step 8, its last
    end(second.run)
    advance(sweep_id)
    second.refresh_from_db()
    assert second.state == TrialState.COMPLETE and second.value == 0.1
    assert not PrunerDecision.objects.filter(trial=second, pruned=True).exists()


def test_a_trials_run_names_its_sweep(member: APIClient, version: Any, versions: list[int]) -> None:
    sweep_id = member.post("/api/sweeps/", sweep_body(version, versions), format="json").json()[
        "id"
    ]
    advance(sweep_id)
    trial = SweepTrial.objects.get(sweep_id=sweep_id, number=1)
    shown = member.get(f"/api/runs/{trial.run_id}/").json()
    assert shown["sweep"] == {"id": sweep_id, "name": "lr, kl and reward", "trial": 1}
    assert (
        member.get(f"/api/runs/{Sweep.objects.get().trials.get(number=0).run_id}/").json()["sweep"][
            "trial"
        ]
        == 0
    )


def test_a_sweep_from_a_run_clones_it_for_each_trial_and_keeps_it(
    member: APIClient, version: Any, versions: list[int]
) -> None:
    base = member.post(
        "/api/runs/",
        {
            "project": "alpha",
            "name": "base",
            "dataset_version": version.pk,
            "preset": "grpo-tiny-arith",
        },
        format="json",
    ).json()
    body = sweep_body(version, versions, base_run=base["id"], preset="", inputs={}, overrides=[])
    response = member.post("/api/sweeps/", body, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["base_run"]["id"] == base["id"]
    advance(response.json()["id"])
    for trial in SweepTrial.objects.filter(sweep_id=response.json()["id"]).select_related("run"):
        assert trial.run is not None and trial.run.parent_id == base["id"]
        assert trial.run.dataset_version_id == version.pk  # inherited from the base
        assert trial.run.reward_version_id == trial.params["reward_version"]
    with pytest.raises(ProtectedError):
        Run.objects.filter(pk=base["id"]).delete()  # a later trial clones it

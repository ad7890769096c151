"""Evaluations over the API: models and checkpoints of the project only, on a dataset
version or a run's validation data; stored as a run of kind `evaluation` whose config holds
references the launcher resolves; results computed from the stored samples."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from studio.cli.main import main
from studio.datasets.models import DatasetVersion
from studio.projects.models import ApiToken, AuditEvent
from studio.references.run_inputs import REF
from studio.runs import service
from studio.runs.launch import claim, trainer_config
from studio.runs.models import Checkpoint, Run, RunKind, RunStatus
from studio.telemetry.models import MetricPoint, RolloutSample
from tests.studio.test_run_inputs import upload
from tests.verl_data import counting_answers, verl_rows


def run_with_checkpoints(member: APIClient, version: DatasetVersion, media: Path) -> Run:
    """A training run with checkpoints at steps 2 and 4 in its folder, and one pruned."""
    body = {"project": "alpha", "name": "demo", "dataset_version": version.pk}
    run = Run.objects.get(pk=member.post("/api/runs/", body, format="json").json()["id"])
    for step in (2, 4):
        folder = media / "checkpoints" / f"run-{run.pk}" / f"step_{step}"
        folder.mkdir(parents=True)
        Checkpoint.objects.create(run=run, attempt=1, step=step, uri=str(folder))
    Checkpoint.objects.create(run=run, attempt=1, step=1, uri=str(media / "gone" / "step_1"))
    return run


def evaluate_checkpoints(client: APIClient, run: Run, **body: Any):
    return client.post("/api/evaluations/run-checkpoints/", {"run": run.pk, **body}, format="json")


def test_evaluating_a_runs_checkpoints_makes_one_queued_evaluation_run(member, trained):
    response = evaluate_checkpoints(member, trained)
    assert response.status_code == 201, response.json()
    body = response.json()
    assert [m["label"] for m in body["models"]] == [
        "demo-model",
        "demo @ step 2",
        "demo @ step 4",
    ]  # the base model first, then every reachable checkpoint (step 1 was pruned)
    assert [m["step"] for m in body["models"]] == [1, 2, 3]
    assert body["models"][2]["checkpoint_step"] == 4 and body["models"][2]["run"] == trained.pk
    assert body["settings"]["greedy"] is True and body["settings"]["k"] == 1
    evaluation = Run.objects.get(pk=body["id"])
    assert evaluation.kind == RunKind.EVALUATION and evaluation.status == RunStatus.QUEUED
    # Its prompts are the run's validation rows, its reward the run's.
    assert evaluation.validation == trained.validation == "held_out"
    assert evaluation.dataset_version_id == trained.dataset_version_id
    assert evaluation.config["reward"] == trained.config["reward"]
    paths = [m["path"] for m in evaluation.config["evaluation"]["models"]]
    assert all(p.startswith(REF) for p in paths)
    # Training runs list without it; the evaluations list has it.
    assert [r["id"] for r in member.get("/api/runs/").json()["results"]] == [trained.pk]
    assert [e["id"] for e in member.get("/api/evaluations/").json()["results"]] == [body["id"]]
    kinds = member.get("/api/runs/?kind=evaluation").json()["results"]
    assert [r["kind"] for r in kinds] == ["evaluation"]


def test_the_launcher_resolves_the_evaluated_models_to_folders(member, trained, media):
    evaluation_id = evaluate_checkpoints(member, trained).json()["id"]
    attempt = claim(evaluation_id)
    assert attempt is not None
    tree = trainer_config(Run.objects.get(pk=evaluation_id), attempt)
    paths = [m["path"] for m in tree["evaluation"]["models"]]
    assert paths[0].endswith("demo-model")
    assert paths[1:] == [
        str((media / "checkpoints" / f"run-{trained.pk}" / f"step_{s}").resolve()) for s in (2, 4)
    ]
    assert tree["data"]["val_files"] == [
        f"http://127.0.0.1:8000/api/ingest/runs/{evaluation_id}/dataset?split=val"
    ]
    assert REF not in repr(tree)


def test_models_and_checkpoints_of_another_project_are_refused(world, member, trained, media):
    foreign = upload(world, world.other_project, "theirs", verl_rows(counting_answers(4)), media)
    theirs = Run.objects.create(
        project=world.other_project, name="x", config=trained.config, created_by=world.outsider
    )
    Checkpoint.objects.create(run=theirs, attempt=1, step=1, uri=str(media))
    base = {"project": "alpha", "dataset_version": foreign.pk}
    response = member.post(
        "/api/evaluations/", {**base, "models": [{"model": 99999}]}, format="json"
    )
    assert response.status_code == 400
    response = member.post(
        "/api/evaluations/", {**base, "models": [{"run": theirs.pk, "step": 1}]}, format="json"
    )
    assert "models.0" in response.json()["error"]["fields"]
    model = trained.model_id
    response = member.post(
        "/api/evaluations/", {**base, "models": [{"model": model}]}, format="json"
    )
    assert "dataset_version" in response.json()["error"]["fields"]
    assert not Run.objects.filter(kind=RunKind.EVALUATION).exists()
    # No path is ever accepted: a model is an id.
    response = member.post(
        "/api/evaluations/",
        {"project": "alpha", "dataset_version": foreign.pk, "models": [{"path": "/etc"}]},
        format="json",
    )
    assert response.status_code == 400


def test_a_dataset_version_with_a_builtin_reward_and_sampling(world, member, trained, version):
    response = member.post(
        "/api/evaluations/",
        {
            "project": "alpha",
            "name": "sampled",
            "models": [{"model": trained.model_id}, {"run": trained.pk, "step": 4}],
            "dataset_version": version.pk,
            "builtin_reward": "exact_match",
            "greedy": False,
            "k": 4,
            "temperature": 0.7,
            "max_new_tokens": 12,
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    evaluation = Run.objects.get(pk=response.json()["id"])
    section = evaluation.config["evaluation"]
    assert (section["k"], section["greedy"], section["temperature"]) == (4, False, 0.7)
    assert evaluation.config["reward"]["function"] == "exact_match"
    assert evaluation.config["rollout"]["max_new_tokens"] == 12
    assert evaluation.validation == "dataset_version"
    assert evaluation.validation_version_id == version.pk
    # Greedy with several samples is refused, naming the field.
    bad = member.post(
        "/api/evaluations/",
        {
            "project": "alpha",
            "models": [{"model": trained.model_id}],
            "dataset_version": version.pk,
            "k": 3,
        },
        format="json",
    )
    assert "k" in bad.json()["error"]["fields"]


def test_an_evaluation_on_data_no_scorer_knows_needs_a_chosen_reward(world, member, trained, media):
    mine = upload(
        world, world.project, "mine", verl_rows(counting_answers(6), data_source="my_task"), media
    )
    body = {"project": "alpha", "models": [{"model": trained.model_id}], "dataset_version": mine.pk}
    refused = member.post("/api/evaluations/", body, format="json")
    assert refused.status_code == 400
    assert "'my_task' (6 rows)" in refused.json()["error"]["fields"]["reward_version"][0]
    chosen = member.post(
        "/api/evaluations/", {**body, "builtin_reward": "exact_match"}, format="json"
    )
    assert chosen.status_code == 201, chosen.json()


def test_results_per_model_come_from_the_stored_samples(member, trained):
    evaluation = Run.objects.get(pk=evaluate_checkpoints(member, trained).json()["id"])
    MetricPoint.objects.create(
        run=evaluation, attempt=1, seq=0, step=0, key="eval/total_responses", value=9
    )
    scores = {1: [0.0, 0.0, 1.0], 2: [1.0, 1.0, 0.0]}  # step 3 not evaluated yet
    for step, values in scores.items():
        for i, score in enumerate(values):
            RolloutSample.objects.create(
                run=evaluation,
                attempt=1,
                seq=step,
                position=i,
                step=step,
                split="eval",
                group_id=f"p{i}",
                data_source="counting" if i else "other",
                prompt="q",
                response="a",
                score=score,
                response_length=2 + i,
                error="boom" if (step, i) == (1, 0) else "",
            )
    body = member.get(f"/api/evaluations/{evaluation.pk}/").json()
    base, step2, step4 = body["results"]["models"]
    assert base["scores"]["mean_score"] == pytest.approx(1 / 3)
    assert base["scores"]["pass_at_k"] == pytest.approx(1 / 3)
    assert base["scores"]["error_rate"] == pytest.approx(1 / 3)
    assert step2["scores"]["mean_at_k"] == pytest.approx(2 / 3)
    assert step2["scores"]["mean_length"] == pytest.approx(3.0)
    assert step2["by_data_source"]["other"]["mean_score"] == 1.0
    assert step4["scores"] is None
    assert body["results"]["progress"] == {"responses": 6, "total": 9, "fraction": 6 / 9}


def test_cancel_is_a_runs_cancel_and_viewers_may_not(world, member, trained):
    evaluation_id = evaluate_checkpoints(member, trained).json()["id"]
    viewer = world.client("viewer")
    assert viewer.post(f"/api/evaluations/{evaluation_id}/cancel/").status_code == 403
    assert evaluate_checkpoints(viewer, trained).status_code == 403
    response = member.post(f"/api/evaluations/{evaluation_id}/cancel/")
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    # Clone and resume are for training runs.
    assert member.post(f"/api/runs/{evaluation_id}/resume/").status_code == 409
    assert member.post(f"/api/runs/{evaluation_id}/clone/", {}, format="json").status_code == 409


def test_creating_an_evaluation_is_audited_like_creating_a_run(world, member, trained):
    evaluation_id = evaluate_checkpoints(member, trained).json()["id"]
    event = AuditEvent.objects.get(action="evaluation.create")
    assert (event.object_type, event.object_id) == ("run", str(evaluation_id))
    assert (event.actor, event.project) == (world.member, world.project)
    assert event.detail == {"name": "demo: checkpoints", "models": 3}
    listed = world.client("viewer").get("/api/audit/", {"action": "evaluation.create"}).json()
    assert [e["object_id"] for e in listed["results"]] == [str(evaluation_id)]


def test_cancelling_an_evaluation_is_audited_with_a_run_cancels_detail(world, member, trained):
    evaluation_id = evaluate_checkpoints(member, trained).json()["id"]
    response = member.post(f"/api/evaluations/{evaluation_id}/cancel/", {"reason": "r"})
    assert response.status_code == 200
    event = AuditEvent.objects.get(action="evaluation.cancel")
    assert (event.object_id, event.actor) == (str(evaluation_id), world.member)
    assert event.detail == {"previous": "queued", "status": "cancelled"}  # run.cancel's keys
    assert not AuditEvent.objects.filter(action="run.cancel").exists()


def test_an_evaluation_and_a_run_are_stored_and_cancelled_by_the_same_service_functions(
    member, trained, monkeypatch
):
    stored: list[str] = []
    cancelled: list[int] = []
    real_store, real_cancel = service.store_run, service.cancel_run

    def store(project, new, user, history, action, **audit):
        stored.append(action)
        return real_store(project, new, user, history, action, **audit)

    def cancel(run, user, reason):
        cancelled.append(run.pk)
        real_cancel(run, user, reason)

    monkeypatch.setattr(service, "store_run", store)
    monkeypatch.setattr(service, "cancel_run", cancel)
    evaluation_id = evaluate_checkpoints(member, trained).json()["id"]
    body = {"project": "alpha", "name": "second", "dataset_version": trained.dataset_version_id}
    run_id = member.post("/api/runs/", body, format="json").json()["id"]
    assert stored == ["evaluation.create", "run.create"]
    assert member.post(f"/api/evaluations/{evaluation_id}/cancel/").status_code == 200
    assert member.post(f"/api/runs/{run_id}/cancel/").status_code == 200
    assert cancelled == [evaluation_id, run_id]


def test_a_run_without_reachable_checkpoints_is_told_so(world, member, version):
    body = {"project": "alpha", "name": "fresh", "dataset_version": version.pk}
    run = Run.objects.get(pk=member.post("/api/runs/", body, format="json").json()["id"])
    response = evaluate_checkpoints(member, run)
    assert response.status_code == 400
    assert "no checkpoint" in response.json()["error"]["fields"]["run"][0]
    outsider = world.client("outsider")
    assert evaluate_checkpoints(outsider, run).status_code == 404


# --- rlstudio eval, against a live server -----------------------------------------------


def cli(server: str, world, *argv: str) -> list[str]:
    key = ApiToken.issue(world.member, "cli")[1]
    return [*argv, "--url", server, "--token", key]


def test_eval_checkpoints_then_show_and_cancel(live_server, world, trained, capsys):
    server = str(live_server.url)
    assert main(cli(server, world, "eval", "checkpoints", str(trained.pk))) == 0
    out = capsys.readouterr().out
    assert "created evaluation" in out and "demo @ step 4" in out
    evaluation = Run.objects.get(kind=RunKind.EVALUATION)
    RolloutSample.objects.create(
        run=evaluation,
        attempt=1,
        seq=1,
        position=0,
        step=1,
        split="eval",
        group_id="p",
        data_source="counting",
        prompt="q",
        response="a",
        score=1.0,
        response_length=3,
    )
    assert main(cli(server, world, "eval", "show", str(evaluation.pk))) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "PASS@1" in lines[1]
    assert lines[2].split()[-5:] == ["1.000", "1.000", "1.000", "3.000", "0.000"]
    assert main(cli(server, world, "eval", "list")) == 0
    assert str(evaluation.pk) in capsys.readouterr().out
    assert main(cli(server, world, "eval", "cancel", str(evaluation.pk))) == 0
    assert "cancelled" in capsys.readouterr().out


def test_eval_create_names_models_and_checkpoints_and_refusals_exit_1(
    live_server, world, trained, version, capsys
):
    server = str(live_server.url)
    argv = cli(
        server,
        world,
        "eval",
        "create",
        "--project",
        "alpha",
        "--model",
        str(trained.model_id),
        "--checkpoint",
        f"{trained.pk}:2",
        "--dataset-version",
        str(version.pk),
        "--sample",
        "--k",
        "2",
    )
    assert main(argv) == 0
    evaluation = Run.objects.get(kind=RunKind.EVALUATION)
    assert evaluation.config["evaluation"]["k"] == 2
    assert len(evaluation.config["evaluation"]["models"]) == 2
    capsys.readouterr()
    greedy_k = cli(
        server,
        world,
        "eval",
        "create",
        "--project",
        "alpha",
        "--model",
        str(trained.model_id),
        "--dataset-version",
        str(version.pk),
        "--k",
        "3",
    )
    assert main(greedy_k) == 1
    assert "k" in capsys.readouterr().err
    bad = cli(
        server,
        world,
        "eval",
        "create",
        "--project",
        "alpha",
        "--checkpoint",
        "x",
        "--dataset-version",
        "1",
    )
    assert main(bad) == 2


def test_a_missing_evaluation_is_called_an_evaluation(member):
    """Evaluations are runs underneath; the 404 still names what the user asked for."""
    response = member.get("/api/evaluations/987654/")
    assert response.status_code == 404
    assert response.json()["error"]["message"] == "There is no evaluation #987654 in your projects."

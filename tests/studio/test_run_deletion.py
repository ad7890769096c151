"""Deleting a run frees its storage and leaves nothing behind; archiving hides it; the
project's storage quota refuses new runs (studio.runs.deletion, studio.runs.quota)."""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.db import models
from rest_framework.test import APIClient

from studio.model_registry.models import ModelKind, ModelRole, RegisteredModel
from studio.playground import store as playground
from studio.projects.models import AuditEvent, hash_token
from studio.runs import deletion, lifecycle
from studio.runs.models import Checkpoint, IngestToken, Run, RunAttempt, RunStatus
from studio.telemetry.models import (
    LogLine,
    MetricPoint,
    RolloutSample,
    RunAlert,
    SampleLabel,
)
from tests.studio.test_evaluations_api import evaluate_checkpoints, run_with_checkpoints
from tests.studio.test_playground_api import forget_playground

MiB = 1024 * 1024


@pytest.fixture(autouse=True)
def no_playground_servers(db: None) -> Iterator[None]:
    """No playground record of another test of this database (a live stack's chat, an
    earlier session's) may hold this test's checkpoints: ids repeat, and such a record
    made a deletion here fail with "the playground chats with its checkpoint at step 4"."""
    forget_playground()
    yield
    forget_playground()


@pytest.fixture
def spool(settings, media: Path) -> Path:
    """The trainers' working directory (their spools: var/spool/run-<id>-attempt-<n>.*)."""
    workdir = media / "trainer"
    (workdir / "var" / "spool").mkdir(parents=True)
    settings.RLSTUDIO_TRAINER_WORKDIR = str(workdir)
    return workdir / "var" / "spool"


@pytest.fixture
def commit(django_capture_on_commit_callbacks: Any) -> Callable[[], Any]:
    """Runs what a request leaves for after its commit (the test's transaction never
    commits), as a committed request would."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


def tree_bytes(*folders: Path) -> int:
    """Bytes of the regular files under `folders`, by a walk of their own."""
    total = 0
    for folder in folders:
        for parent, _, names in os.walk(folder):
            for name in names:
                path = Path(parent) / name
                if path.is_file() and not path.is_symlink():
                    total += path.stat().st_size
    return total


def write_files(run: Run, media: Path, spool: Path) -> None:
    """Checkpoint weights, an HF export and a spool, as a trainer leaves them."""
    folder = media / "checkpoints" / f"run-{run.pk}"
    for step, size in ((2, MiB), (4, 2 * MiB)):
        (folder / f"step_{step}").mkdir(parents=True, exist_ok=True)
        (folder / f"step_{step}" / "actor.pt").write_bytes(os.urandom(size))
        (folder / f"step_{step}" / "meta.json").write_text(json.dumps({"step": step}))
    (folder / "hf").mkdir(exist_ok=True)
    (folder / "hf" / "config.json").write_text("{}")
    (spool / f"run-{run.pk}-attempt-1.spool").write_bytes(b"x" * 5000)
    (spool / f"run-{run.pk}-attempt-1.acked").write_text('{"acked_through": 9}')


def add_records(run: Run, user: Any) -> None:
    """A row of every kind a run's life leaves."""
    attempt = RunAttempt.objects.create(run=run, number=1, submission_id=f"rls-{run.pk}-1")
    IngestToken.objects.create(run=run, attempt=attempt, token_hash=hash_token(secrets.token_hex()))
    MetricPoint.objects.bulk_create(
        MetricPoint(run=run, attempt=1, seq=s, step=s, key="reward/mean", value=s / 10)
        for s in range(1, 6)
    )
    sample = RolloutSample.objects.create(
        run=run,
        attempt=1,
        seq=10,
        position=0,
        step=1,
        group_id="g0",
        data_source="arith",
        prompt="1 + 1?",
        response="2",
        ground_truth="2",
        score=1.0,
    )
    SampleLabel.objects.create(sample=sample, label="flag", author=user)
    LogLine.objects.create(run=run, attempt=1, seq=11, level="INFO", message="step 1")
    RunAlert.objects.create(
        run=run, attempt=1, seq=5, step=5, kind="reward_errors", severity="warning", message="!"
    )


def relations_to(
    model: type[models.Model], cascading: bool
) -> Iterator[tuple[type[models.Model], str]]:
    """Every (model, field name) of the app registry whose foreign key points at `model`
    (with `cascading`, only those deleted with what they point at)."""
    for candidate in apps.get_models():
        for field in candidate._meta.get_fields():
            if not (field.concrete and field.is_relation and field.related_model is model):
                continue
            on_delete = field.remote_field.on_delete  # type: ignore[union-attr]
            if not cascading or on_delete is models.CASCADE:
                yield candidate, field.name


def owned_rows(run_id: int) -> dict[type[models.Model], set[Any]]:
    """The primary keys of every row deleted with the run (cascading from it, or from a row
    that cascades from it), found from the app registry (no table named by hand)."""
    found: dict[type[models.Model], set[Any]] = {}
    frontier: list[tuple[type[models.Model], set[Any]]] = [(Run, {run_id})]
    while frontier:
        model, keys = frontier.pop()
        for related, name in relations_to(model, cascading=True):
            rows = related._default_manager.filter(**{f"{name}__in": keys})
            new = set(rows.values_list("pk", flat=True)) - found.get(related, set())
            if new:
                found.setdefault(related, set()).update(new)
                frontier.append((related, new))
    return found


def rows_pointing_at(run_id: int) -> list[str]:
    """Every row of any model whose foreign key (of any kind) names the run."""
    return [
        f"{model.__name__}.{name}"
        for model, name in relations_to(Run, cascading=False)
        if model._default_manager.filter(**{name: run_id}).exists()
    ]


@pytest.fixture
def ended(world, member: APIClient, version: Any, media: Path, spool: Path) -> Run:
    """A cancelled run with a row of every kind and files in its folder and spool."""
    run = run_with_checkpoints(member, version, media)
    lifecycle.cancel(run.pk, world.member)
    add_records(run, world.member)
    write_files(run, media, spool)
    return run


def test_deleting_a_run_frees_its_files_and_leaves_no_rows_or_files(
    world, member, ended, version, media, spool, commit
):
    other = run_with_checkpoints(member, version, media)  # a neighbour that must stay whole
    write_files(other, media, spool)
    folders = (media / "checkpoints", spool)
    before, kept = tree_bytes(*folders), tree_bytes(media / "checkpoints" / f"run-{other.pk}")
    rows = owned_rows(ended.pk)
    kinds = {m.__name__ for m in rows}
    assert {"RunAttempt", "IngestToken", "Checkpoint", "MetricPoint", "MetricTile"} <= kinds
    assert {"RolloutSample", "SampleLabel", "LogLine", "RunAlert", "RunStatusChange"} <= kinds

    with commit():
        response = member.delete(f"/api/runs/{ended.pk}/")

    assert response.status_code == 200, response.json()
    after = tree_bytes(*folders)
    assert response.json() == {"id": ended.pk, "name": "demo", "freed_bytes": before - after}
    assert before - after > 3 * MiB  # the weights, the export, the spool
    assert not (media / "checkpoints" / f"run-{ended.pk}").exists()
    assert not list(spool.glob(f"run-{ended.pk}-*"))
    assert tree_bytes(media / "checkpoints" / f"run-{other.pk}") == kept
    assert list(spool.glob(f"run-{other.pk}-*"))
    assert not Run.objects.filter(pk=ended.pk).exists()
    for model, pks in rows.items():
        left = model._default_manager.filter(pk__in=pks).count()
        assert left == 0, f"{left} {model.__name__} rows of run {ended.pk} are left"
    assert owned_rows(ended.pk) == {} and rows_pointing_at(ended.pk) == []
    event = AuditEvent.objects.get(action="run.delete", object_id=str(ended.pk))
    assert event.detail["name"] == "demo" and event.detail["freed_bytes"] == before - after
    assert event.actor == world.member and event.project == world.project


def test_deleting_a_run_twice_frees_nothing_the_second_time(world, ended, commit):
    with commit():
        assert deletion.delete_run(ended, world.member) > 3 * MiB
        assert deletion.delete_run(ended, world.member) == 0
    assert AuditEvent.objects.filter(action="run.delete").count() == 1


def test_a_live_run_is_refused_and_told_to_cancel_first(member, version, media, commit):
    run = run_with_checkpoints(member, version, media)  # queued
    with commit():
        response = member.delete(f"/api/runs/{run.pk}/")
    assert response.status_code == 409
    message = response.json()["error"]["message"]
    assert "queued" in message and "Cancel it first" in message
    assert Run.objects.filter(pk=run.pk).exists()
    assert (media / "checkpoints" / f"run-{run.pk}" / "step_2").is_dir()


def test_a_run_a_model_is_registered_from_is_refused_naming_the_model(
    world, ended, member, media, commit
):
    checkpoint = Checkpoint.objects.get(run=ended, step=4)
    RegisteredModel.objects.create(
        project=world.project,
        name="tuned",
        kind=ModelKind.CHECKPOINT,
        role=ModelRole.POLICY,
        checkpoint=checkpoint,
        created_by=world.member,
    )
    with commit():
        response = member.delete(f"/api/runs/{ended.pk}/")
    assert response.status_code == 409
    message = response.json()["error"]["message"]
    assert "'tuned'" in message and "step 4" in message and "delete them first" in message
    assert (media / "checkpoints" / f"run-{ended.pk}" / "step_4" / "actor.pt").is_file()
    assert Checkpoint.objects.filter(run=ended).count() == 3


def test_a_run_whose_checkpoints_an_evaluation_evaluated_is_refused_naming_it(
    ended, member, commit
):
    Run.objects.filter(pk=ended.pk).update(status=RunStatus.QUEUED)  # reachable checkpoints
    evaluation = evaluate_checkpoints(member, ended, name="across training").json()
    Run.objects.filter(pk=ended.pk).update(status=RunStatus.CANCELLED)
    with commit():
        response = member.delete(f"/api/runs/{ended.pk}/")
    assert response.status_code == 409
    message = response.json()["error"]["message"]
    assert f"'across training' (id {evaluation['id']})" in message


def test_a_run_whose_checkpoint_the_playground_serves_is_refused_until_it_is_released(
    world, ended, member, commit
):
    checkpoint = Checkpoint.objects.get(run=ended, step=2)
    server_id = f"p{world.project.pk}-c{checkpoint.pk}"
    forget_playground()
    try:
        playground.write_server(server_id, state="ready", seen_at=time.time())
        playground.remember_server(server_id)
        with commit():
            response = member.delete(f"/api/runs/{ended.pk}/")
        assert response.status_code == 409
        assert (
            "playground chats with its checkpoint at step 2"
            in (response.json()["error"]["message"])
        )
    finally:
        forget_playground()
    with commit():
        assert member.delete(f"/api/runs/{ended.pk}/").status_code == 200


def test_a_sweeps_base_run_is_refused_naming_the_sweep_and_a_trial_leaves_its_trial(
    world, ended, member, version, media, commit
):
    from studio.sweeps.models import Sweep, SweepTrial

    sweep = Sweep.objects.create(
        project=world.project,
        name="lr sweep",
        base_run=ended,
        space=[],
        method="random",
        max_trials=2,
        created_by=world.member,
    )
    with commit():
        response = member.delete(f"/api/runs/{ended.pk}/")
    assert response.status_code == 409
    assert f"sweep 'lr sweep' (id {sweep.pk}) uses it" in response.json()["error"]["message"]
    trial_run = run_with_checkpoints(member, version, media)
    lifecycle.cancel(trial_run.pk, world.member)
    trial = SweepTrial.objects.create(sweep=sweep, number=0, run=trial_run, params={})
    with commit():
        assert member.delete(f"/api/runs/{trial_run.pk}/").status_code == 200
    trial.refresh_from_db()
    assert trial.run is None  # the trial stays: the sweep's numbering and budget hold
    assert rows_pointing_at(trial_run.pk) == []


def test_deleting_an_evaluation_frees_it_and_then_its_run(ended, member, commit):
    Run.objects.filter(pk=ended.pk).update(status=RunStatus.QUEUED)
    evaluation = evaluate_checkpoints(member, ended).json()
    Run.objects.filter(pk=ended.pk).update(status=RunStatus.CANCELLED)
    lifecycle.cancel(evaluation["id"])
    with commit():
        assert member.delete(f"/api/runs/{evaluation['id']}/").status_code == 200
        assert member.delete(f"/api/runs/{ended.pk}/").status_code == 200
    assert AuditEvent.objects.filter(action="evaluation.delete").count() == 1


def test_a_link_in_the_run_folder_loses_its_name_and_nothing_more(
    ended, member, media, tmp_path, commit
):
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep.bin").write_bytes(b"k" * 1000)
    (media / "checkpoints" / f"run-{ended.pk}" / "escape").symlink_to(outside)
    with commit():
        response = member.delete(f"/api/runs/{ended.pk}/")
    assert response.status_code == 200
    assert (outside / "keep.bin").read_bytes() == b"k" * 1000
    assert not (media / "checkpoints" / f"run-{ended.pk}").exists()


def test_viewers_may_not_delete_or_archive(world, ended):
    viewer = world.client("viewer")
    assert viewer.delete(f"/api/runs/{ended.pk}/").status_code == 403
    assert viewer.post(f"/api/runs/{ended.pk}/archive/").status_code == 403
    assert Run.objects.filter(pk=ended.pk, archived_at__isnull=True).exists()


def listed(client: APIClient, query: str = "") -> list[int]:
    return [r["id"] for r in client.get(f"/api/runs/{query}").json()["results"]]


def test_an_archived_run_is_hidden_from_the_list_but_read_by_id(member, ended, version, media):
    live = run_with_checkpoints(member, version, media)
    response = member.post(f"/api/runs/{ended.pk}/archive/")
    assert response.status_code == 200 and response.json()["archived_at"] is not None
    assert listed(member) == [live.pk]
    assert listed(member, "?archived=true") == [ended.pk]
    assert sorted(listed(member, "?archived=all")) == sorted([live.pk, ended.pk])
    assert member.get(f"/api/runs/{ended.pk}/").json()["archived_at"] is not None
    assert member.post(f"/api/runs/{ended.pk}/archive/").status_code == 200  # twice: harmless
    assert AuditEvent.objects.filter(action="run.archive").count() == 1
    refused = member.post(f"/api/runs/{live.pk}/archive/")
    assert refused.status_code == 409 and "Cancel it first" in refused.json()["error"]["message"]
    assert member.post(f"/api/runs/{ended.pk}/unarchive/").json()["archived_at"] is None
    assert sorted(listed(member)) == sorted([live.pk, ended.pk])


def test_resuming_an_archived_run_lists_it_again(world, member, ended):
    member.post(f"/api/runs/{ended.pk}/archive/")
    assert member.post(f"/api/runs/{ended.pk}/resume/").status_code == 200
    assert ended.pk in listed(member)


def test_a_run_is_measured_when_it_ends(world, member, version, media, spool, commit):
    run = run_with_checkpoints(member, version, media)
    write_files(run, media, spool)
    assert Run.objects.get(pk=run.pk).storage_bytes is None
    with commit():
        lifecycle.cancel(run.pk, world.member)
    expected = (
        tree_bytes(media / "checkpoints" / f"run-{run.pk}") + 5000 + len('{"acked_through": 9}')
    )
    assert Run.objects.get(pk=run.pk).storage_bytes == expected


def test_the_storage_endpoint_counts_runs_and_datasets(world, member, ended, version, settings):
    settings.RLSTUDIO_PROJECT_STORAGE_QUOTA_GB = 2
    body = member.get("/api/projects/alpha/storage/").json()
    runs = Run.objects.get(pk=ended.pk).storage_bytes
    assert runs is not None and runs > 3 * MiB
    assert body["by_kind"] == {
        "runs": runs,
        "evaluations": 0,
        "datasets": version.size_bytes,
        "models": 0,
    }
    assert body["used_bytes"] == runs + version.size_bytes
    assert body["quota_bytes"] == 2 * 1024**3 and body["over_quota"] is False
    assert world.client("viewer").get("/api/projects/alpha/storage/").status_code == 200
    assert world.client("outsider").get("/api/projects/alpha/storage/").status_code == 404


def test_the_quota_refuses_a_new_run_until_runs_are_deleted(
    member, ended, version, settings, commit
):
    settings.RLSTUDIO_PROJECT_STORAGE_QUOTA_GB = 2 / 1024  # 2 MiB: the run takes over 3
    body = {"project": "alpha", "name": "more", "dataset_version": version.pk}
    refused = member.post("/api/runs/", body, format="json")
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert error["code"] == "storage_quota_exceeded"
    assert "uses 3" in error["message"] and "of its 2 MiB storage quota" in error["message"]
    assert "Delete runs" in error["message"] and "frees nothing" in error["message"]
    clone = member.post(f"/api/runs/{ended.pk}/clone/", {}, format="json")
    assert clone.status_code == 400 and clone.json()["error"]["code"] == "storage_quota_exceeded"
    assert member.post(f"/api/runs/{ended.pk}/archive/").status_code == 200  # frees nothing
    assert member.post("/api/runs/", body, format="json").status_code == 400
    with commit():
        assert member.delete(f"/api/runs/{ended.pk}/").status_code == 200
    assert member.post("/api/runs/", body, format="json").status_code == 201


def test_deleting_the_project_removes_its_runs_files(world, ended, media, spool, commit):
    with commit():
        assert world.client("owner").delete("/api/projects/alpha/").status_code == 204
    assert not (media / "checkpoints" / f"run-{ended.pk}").exists()
    assert not list(spool.glob(f"run-{ended.pk}-*"))

"""Runs stored before runs referenced resources, as the runs table held them (migration
runs.0005: no model, validation "config", the config naming paths), brought to
references by runs.0008_runs_to_references; those whose files are gone kept as
provenance records, shown and never relaunched.

The rows are written through the historical model of runs.0005 into the var dir and
media of the test, then the database is migrated forward: the same steps a studio of the
previous commit, with older runs in its database and var dir, goes through on upgrade.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from studio.datasets.models import DatasetVersion
from studio.model_registry.models import ModelKind
from studio.runs.launch import LaunchRefused, claim, trainer_config
from studio.runs.models import Run, RunStatus
from tests.studio.conftest import World
from tests.studio.test_reports import download
from tests.studio.test_run_inputs import upload
from tests.verl_data import counting_answers, parquet_bytes, verl_rows

BEFORE = ("runs", "0005_run_queue_passes")


@pytest.fixture
def checkpoints(settings, tmp_path: Path) -> Path:
    settings.RLSTUDIO_CHECKPOINT_ROOT = str(tmp_path / "checkpoints")
    return tmp_path / "checkpoints"


def older_config(model: str, train: list[str], val: list[str]) -> dict[str, Any]:
    """A config as runs stored before references held it: paths under the var dir."""
    return {
        "model": {"path": model},
        "data": {"train_files": train, "val_files": val, "format": "auto"},
        "reward": {"function": "gsm8k", "model": {"path": None}, "extra_models": []},
        "checkpoint": {"dir": "var/checkpoints/old", "resume": "never"},
        "logging": {"spool_dir": "var/spool", "jsonl_path": None},
    }


def scored_by_demo_reward_model(train: str) -> dict[str, Any]:
    config = older_config("var/demo-model", [train], [])
    config["reward"]["model"]["path"] = "var/demo-reward-model"
    return config


def migrate_older_runs(world: World, rows: list[dict[str, Any]]) -> list[Run]:
    """`rows` stored as runs.0005 stored runs, then every migration since applied."""
    executor = MigrationExecutor(connection)
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # ALTER TABLE refuses pending checks
    executor.migrate([BEFORE])  # in the test's transaction: undone after it
    older = executor.loader.project_state(BEFORE).apps.get_model("runs", "Run")
    ids = [
        older.objects.create(project_id=world.project.pk, created_by_id=world.owner.pk, **row).pk
        for row in rows
    ]
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    return [Run.objects.get(pk=pk) for pk in ids]


def write_rows(var: Path, name: str, rows: list[dict[str, Any]]) -> str:
    """A data file under the var dir; the path an older config names it by."""
    path = var / "old-data" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(parquet_bytes(rows))
    return f"var/old-data/{name}"


def test_a_run_validates_on_one_of_three_choices_and_holds_out_rows_by_default():
    validation = Run._meta.get_field("validation")
    assert [value for value, _ in validation.choices] == ["held_out", "dataset_version", "none"]
    assert validation.default == "held_out"


def test_older_runs_whose_files_remain_get_references_to_matching_or_new_versions(
    world: World, media: Path, studio_var_dir: Path, checkpoints: Path
):
    training_rows = verl_rows(counting_answers(12))
    stored = upload(world, world.project, "counting", training_rows, media)
    train = write_rows(studio_var_dir, "train.parquet", training_rows)  # the stored version's
    val = write_rows(studio_var_dir, "val.parquet", verl_rows(counting_answers(4)))
    labelled = upload(
        world,
        world.project,
        "labelled",
        verl_rows(counting_answers(6), splits=["train"] * 4 + ["test"] * 2),
        media,
    )

    by_files, no_val, by_version = migrate_older_runs(
        world,
        [
            {"name": "files", "config": older_config("var/demo-model", [train], [val])},
            {"name": "no val", "config": scored_by_demo_reward_model(train)},
            {
                "name": "given a version",
                "config": older_config("var/demo-model", ["var/gone.parquet"], []),
                "dataset_version_id": labelled.pk,
            },
        ],
    )

    assert by_files.model is not None and by_files.model.kind == ModelKind.DEMO
    assert by_files.dataset_version == stored  # the same rows: the stored version
    made = by_files.validation_version
    assert made is not None and made.row_count == 4  # a version made from the file
    assert made.dataset.name == val and made.dataset.project == world.project
    assert by_files.validation == "dataset_version"
    assert by_files.config["model"]["path"] == f"resource:model/{by_files.model.pk}"
    assert by_files.config["data"]["train_files"] == [f"resource:dataset-version/{stored.pk}/train"]
    assert by_files.config["data"]["val_files"] == [f"resource:dataset-version/{made.pk}"]
    assert by_files.config["checkpoint"]["dir"] == "resource:run/checkpoint.dir"
    assert (no_val.validation, no_val.dataset_version, no_val.model) == (
        "none",
        stored,
        by_files.model,
    )
    judge = no_val.reward_models["reward.model.path"]
    assert no_val.config["reward"]["model"]["path"] == f"resource:model/{judge}"
    assert by_files.reward_models == {}
    # Given a version whose rows are labelled held out: what its launch served.
    assert (by_version.validation, by_version.dataset_version) == ("held_out", labelled)
    assert DatasetVersion.objects.filter(dataset__project=world.project).count() == 3
    assert not Run.objects.filter(validation="config").exists()
    assert all(run.provenance is None for run in (by_files, no_val, by_version))

    assert claim(by_files.pk) is not None
    launched = trainer_config(by_files, by_files.attempts.get())
    assert launched["model"]["path"] == str(studio_var_dir / "demo-model")
    assert launched["data"]["train_files"][0].endswith(
        f"/api/ingest/runs/{by_files.pk}/dataset?split=train"
    )


def test_an_older_run_whose_files_are_gone_is_a_provenance_record_shown_and_not_relaunched(
    world: World, media: Path, studio_var_dir: Path, checkpoints: Path
):
    train = write_rows(studio_var_dir, "kept.parquet", verl_rows(counting_answers(5)))
    gone, elsewhere = migrate_older_runs(
        world,
        [
            {
                "name": "gone",
                "config": older_config("var/demo-model", ["var/old-data/deleted.parquet"], []),
                "status": RunStatus.FAILED,
            },
            {"name": "elsewhere", "config": older_config("/srv/old-models/qwen", [train], [])},
        ],
    )

    assert gone.provenance == {
        "paths": {
            "model.path": "var/demo-model",
            "data.train_files": ["var/old-data/deleted.parquet"],
        },
        "missing": ["data.train_files: var/old-data/deleted.parquet is gone"],
    }
    assert gone.model is not None  # its folder is there: a model of the project
    assert (gone.dataset_version, gone.validation) == (None, "none")
    assert gone.config["data"]["train_files"] == ["var/old-data/deleted.parquet"]  # as it was

    assert elsewhere.model is None and elsewhere.dataset_version is not None
    assert elsewhere.provenance is not None
    assert elsewhere.provenance["missing"] == ["model.path: /srv/old-models/qwen is gone"]

    member = world.client("member")
    inputs = member.get(f"/api/runs/{gone.pk}/").json()["inputs"]
    assert inputs["provenance"] == gone.provenance
    assert inputs["dataset"] is None and inputs["validation"] == "none"
    for action in ("clone", "resume"):
        refused = member.post(f"/api/runs/{gone.pk}/{action}/", {}, format="json")
        assert refused.status_code == 400, refused.content
        message = refused.json()["error"]["fields"]["run"][0]
        assert f"Run {gone.pk} is a provenance record" in message
        assert "data.train_files: var/old-data/deleted.parquet is gone" in message
    report = download(member, f"/api/runs/{gone.pk}/report")
    assert "var/old-data/deleted.parquet" in report and "not relaunchable" in report

    Run.objects.filter(pk=gone.pk).update(status=RunStatus.QUEUED)
    attempt = claim(gone.pk)
    assert attempt is not None
    with pytest.raises(LaunchRefused, match="provenance record"):
        trainer_config(Run.objects.get(pk=gone.pk), attempt)

"""Stored runs' configs with the CPU speed keys in their old places (`model`, `actor`),
moved to the `speed` section by runs.0009_speed_section_keys, and back when it is undone."""

from __future__ import annotations

from typing import Any

from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from studio.runs.models import Run
from tests.studio.conftest import World
from trainer.config import build_config, compose

BEFORE = ("runs", "0008_runs_to_references")
MIGRATION = ("runs", "0009_speed_section_keys")

OLD = {
    "model": {"path": "var/demo-model", "cpu_linear_kernel": "torch"},
    "actor": {"ppo_epochs": 1, "replay_rollout_outputs": "off"},
}


def stored_before(
    world: World, configs: list[dict[str, Any]]
) -> tuple[MigrationExecutor, list[int]]:
    executor = MigrationExecutor(connection)
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    executor.migrate([BEFORE])  # in the test's transaction: undone after it
    older = executor.loader.project_state(BEFORE).apps.get_model("runs", "Run")
    ids = [
        older.objects.create(
            project_id=world.project.pk, created_by_id=world.owner.pk, name=f"r{i}", config=c
        ).pk
        for i, c in enumerate(configs)
    ]
    executor.loader.build_graph()
    return executor, ids


def test_stored_configs_move_to_the_speed_section_and_back(world: World) -> None:
    untouched = {"model": {"path": "var/demo-model"}, "actor": {"ppo_epochs": 1}}
    executor, (old_id, plain_id) = stored_before(world, [OLD, untouched])
    executor.migrate([MIGRATION])
    # Only the column read: the database is at MIGRATION, which may lack the code's later ones.
    config = Run.objects.only("config").get(pk=old_id).config
    assert config == {
        "model": {"path": "var/demo-model"},
        "actor": {"ppo_epochs": 1},
        "speed": {"cpu_linear_kernel": "torch", "replay_rollout_outputs": "off"},
    }
    assert compose(stored=config).renamed == ()  # the trainer reads it without a note
    assert build_config(compose(stored=config).tree).speed.cpu_linear_kernel == "torch"
    assert Run.objects.only("config").get(pk=plain_id).config == untouched
    executor.loader.build_graph()
    executor.migrate([BEFORE])
    older = executor.loader.project_state(BEFORE).apps.get_model("runs", "Run")
    assert older.objects.get(pk=old_id).config == OLD

"""Every stored run's config spells the CPU speed keys in the trainer's `speed` section:
`model.cpu_linear_kernel` -> `speed.cpu_linear_kernel` and `actor.replay_rollout_outputs`
-> `speed.replay_rollout_outputs` (trainer.config.speed_section.RENAMED_KEYS).

The trainer reads the old spelling too, with a note in the run's log; migrating the
stored configs keeps that note out of relaunched and cloned runs and shows the keys
where the run form and the config docs have them. The mapping is written out here, not
imported, so that this migration stays what it was when the trainer's keys move on.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

MOVED = {
    ("model", "cpu_linear_kernel"): ("speed", "cpu_linear_kernel"),
    ("actor", "replay_rollout_outputs"): ("speed", "replay_rollout_outputs"),
}


def moved(config: Any, keys: dict[tuple[str, str], tuple[str, str]]) -> bool:
    """Move `keys` (old place -> new place) in `config`, in place; whether any moved. A
    config that already has the new key keeps it and drops the old one; a section the
    move empties is dropped."""
    if not isinstance(config, dict):
        return False
    changed = False
    for (old_section, old_leaf), (new_section, new_leaf) in keys.items():
        section = config.get(old_section)
        if not isinstance(section, dict) or old_leaf not in section:
            continue
        value = section.pop(old_leaf)
        if not section:  # an empty section is its defaults: dropped, as it was written
            del config[old_section]
        target = config.setdefault(new_section, {})
        if isinstance(target, dict):
            target.setdefault(new_leaf, value)
        changed = True
    return changed


def _move(apps: Any, keys: dict[tuple[str, str], tuple[str, str]]) -> None:
    Run = apps.get_model("runs", "Run")
    for run in Run.objects.only("pk", "config").iterator():
        if moved(run.config, keys):
            Run.objects.filter(pk=run.pk).update(config=run.config)


def to_speed_section(apps: Any, schema_editor: Any) -> None:
    _move(apps, MOVED)


def to_old_keys(apps: Any, schema_editor: Any) -> None:
    _move(apps, {new: old for old, new in MOVED.items()})


class Migration(migrations.Migration):
    dependencies = [("runs", "0008_runs_to_references")]

    operations = [migrations.RunPython(to_speed_section, to_old_keys)]

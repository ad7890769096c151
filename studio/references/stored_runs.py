"""Bringing runs stored before runs referenced resources to references (the data
migration runs.0008_runs_to_references calls `upgrade_stored_runs`).

Such a run has no model record (`model` null) and validates by its config's own files
(`validation` "config"); its config names paths. For each of its inputs it gets the
resource that stands for it:

- its model (and reward models): a model of the project for the folder its path names:
  a demo model (`var/demo-model`, found under the var dir) or a folder under one of the
  server's model roots, the project's record if there is one, else a record made from
  the folder. A folder elsewhere is not made a model: the studio reads model folders only
  there (docs/resources.md, "Models");
- its training rows: the dataset version it was given, else the stored version whose
  normalised rows match its file's (the checksum the dataset ingest computes), else a
  version made from that file by the dataset ingest (studio.datasets.versions), in a
  dataset named by the path;
- its validation, the choice it meant: with a dataset version, `held_out` if the version
  labels rows held out (the rows its launch served) else `none`; with files, `none` for
  none, else `dataset_version` on the version made from its one validation file;
- its reward: the reward version it was given, else its config's built-in reward.

Its config's path fields then hold the references a run created today holds
(studio.references.run_inputs.filled_paths). A run for which some input has no resource
(a file gone, several files where a version is one file, a folder outside the model
roots) keeps its config as it was and a provenance record (Run.provenance): what it
named and why nothing stands for it. It is shown and never launched (studio.runs.provenance);
validation `none` there says only that nothing would be served.
"""

from __future__ import annotations

import copy
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar, cast

from django.db import transaction
from django.db.models import Q

from studio.datasets.models import Dataset, DatasetVersion
from studio.datasets.normalise import ColumnMapping, ingest
from studio.datasets.services import create_dataset
from studio.datasets.sniff import UploadError
from studio.datasets.splits import is_validation
from studio.datasets.versions import staging_folder, store_version
from studio.model_registry.locations import DEMO_ASSETS, ModelUnavailable, inside, model_roots
from studio.model_registry.models import ModelKind, ModelRole, RegisteredModel
from studio.model_registry.services import add_model_record
from studio.paths import var_dir
from studio.projects.models import Project
from studio.references.choices import demo_model, usable
from studio.references.kinds.reward_models import reward_model_places
from studio.references.kinds.validation import Validation, ValidationChoice
from studio.references.reference import Reference, is_reference
from studio.references.registry import InputError, RunInputs
from studio.references.run_inputs import (
    completed_inputs,
    filled_paths,
    input_fields,
    path_defaults,
)
from studio.runs.models import Run
from studio.runs.provenance import Provenance
from studio.runs.var_paths import in_var_dir
from trainer.config.paths import path_fields, set_place

T = TypeVar("T")
MAPPING_KEYS = ("format", "prompt_key", "answer_key", "data_source")


def runs_without_references() -> Any:
    """Runs stored before references that are not provenance records yet."""
    return Run.objects.filter(
        Q(model__isnull=True) | Q(validation="config"), provenance__isnull=True
    ).order_by("pk")


def upgrade_stored_runs(columns: Sequence[str] | None = None) -> dict[str, list[int]]:
    """Every run stored before references, brought to them (each in its own
    transaction); the ids of those given references and those kept as provenance.
    `columns`: the Run fields the database has (a migration's historical model's), read
    alone, since this code's Run may have columns a later migration adds."""
    outcome: dict[str, list[int]] = {"references": [], "provenance": []}
    stored = runs_without_references()
    if columns is not None:
        stored = stored.only(*columns)
    for run in stored.select_related("project", "created_by", "dataset_version", "reward_version"):
        with transaction.atomic():
            kept = bring_to_references(run)
        outcome["provenance" if kept else "references"].append(run.pk)
    return outcome


@dataclass
class _Upgrade:
    run: Run
    missing: list[str] = field(default_factory=list)

    @property
    def project(self) -> Project:
        return self.run.project

    def kept(self, place: str, why: str) -> None:
        self.missing.append(f"{place}: {why}")

    def attempt(self, place: str, make: Callable[[], T]) -> T | None:
        """`make()`, or None with why it failed recorded for `place`."""
        try:
            return make()
        except InputError as exc:
            self.kept(place, " ".join(m for ms in exc.errors.values() for m in ms))
        except (ModelUnavailable, UploadError) as exc:
            self.kept(place, str(exc))
        return None


def bring_to_references(run: Run) -> bool:
    """Give `run` references for its inputs (its config's path fields filled as a new
    run's are), or keep it as a provenance record; True if kept as provenance."""
    upgrade = _Upgrade(run)
    tree: dict[str, Any] = copy.deepcopy(run.config)
    model = run.model or _model(upgrade, tree.get("model", {}).get("path"), "model.path")
    training = run.dataset_version or _version(upgrade, tree, "train_files")
    validation = _validation(upgrade, tree, training)
    reward = run.reward_version
    custom = tree.get("reward", {})
    if reward is None and custom.get("function") == "custom":
        upgrade.kept("reward.custom_path", f"{custom.get('custom_path')!r} is code, not a version")
    reward_models: dict[str, RegisteredModel] = {}
    for place in reward_model_places(tree):
        path = _at(tree, place)
        if path:
            found = _model(upgrade, path, place, ModelRole.REWARD)
            if found is not None:
                reward_models[place] = found
    if not upgrade.missing:
        assert model is not None and training is not None
        values = {
            "model": model,
            "training_data": training,
            "validation": validation,
            "reward": reward,
            "reward_models": reward_models,
        }
        made = upgrade.attempt("inputs", lambda: _filled(run.project, values, tree))
        if made is not None:
            inputs, filled = made
            for place, value in filled.items():
                set_place(tree, place, value)
            Run.objects.filter(pk=run.pk).update(config=tree, **input_fields(inputs))
            return False
    provenance: Provenance = {"paths": _named_inputs(run.config), "missing": upgrade.missing}
    Run.objects.filter(pk=run.pk).update(
        provenance=provenance,
        model=model,
        dataset_version=training,
        validation=validation.mode,
        validation_version=validation.version,
    )
    return True


def _filled(
    project: Project, values: dict[str, Any], tree: dict[str, Any]
) -> tuple[RunInputs, dict[str, Any]]:
    """The run's inputs, every registered kind's included (a kind it predates chooses as a
    request naming none of it does), and what its config holds for them."""
    inputs = completed_inputs(project, values)
    return inputs, filled_paths(inputs, tree)


def _named_inputs(tree: dict[str, Any]) -> dict[str, Any]:
    """The inputs `tree` names: its set path fields but the run's own folders."""
    own = {f.dotted for f in path_fields() if f.kind.resource == "run_folder"}
    return {
        place: value
        for place, value in path_defaults(tree).items()
        if place not in own and value not in (None, "", [])
    }


def _at(tree: dict[str, Any], place: str) -> Any:
    node: Any = tree
    for step in place.split("."):
        if isinstance(node, list) and step.isdigit() and int(step) < len(node):
            node = node[int(step)]
        elif isinstance(node, dict):
            node = node.get(step)
        else:
            return None
    return node


def _model(
    upgrade: _Upgrade, path: Any, place: str, role: str = ModelRole.POLICY
) -> RegisteredModel | None:
    """The project's model for the folder `path` names, made from the folder if need be."""
    if is_reference(path):  # a place the run's config already references
        reference = Reference.parse(path)
        known = (
            upgrade.project.models.filter(pk=reference.pk).first()
            if reference.kind == "model" and reference.pk is not None
            else None
        )
        if known is not None:
            return upgrade.attempt(place, lambda: usable(known, place, role))
    if not isinstance(path, str) or not path or is_reference(path):
        upgrade.kept(place, f"{path!r} names no model folder")
        return None
    var = var_dir()
    folder = Path(in_var_dir(path, var))
    found: RegisteredModel | None = None
    if folder.parent.resolve() == var.resolve() and folder.name in DEMO_ASSETS:
        found = upgrade.attempt(
            place, lambda: demo_model(upgrade.project, folder.name, upgrade.run.created_by)
        )
    else:
        for root in model_roots():
            resolved = inside(root, folder)
            if resolved is not None and (resolved / "config.json").is_file():
                relative = str(resolved.relative_to(root))
                found = upgrade.attempt(place, partial(_server_model, upgrade, root, relative))
                break
        else:
            why = "is gone" if not folder.exists() else "lies outside the model roots"
            upgrade.kept(place, f"{path} {why}")
    if found is None:
        return None
    model = found
    return upgrade.attempt(place, lambda: usable(model, place, role))


def _server_model(upgrade: _Upgrade, root: Path, relative: str) -> RegisteredModel:
    project = upgrade.project
    known = RegisteredModel.objects.filter(
        project=project, kind=ModelKind.SERVER, root=str(root), relative_path=relative
    ).first()
    if known is not None:
        return known
    taken = set(project.models.values_list("name", flat=True))
    name = relative if relative not in taken else f"{relative} (run {upgrade.run.pk})"
    return add_model_record(
        project,
        upgrade.run.created_by,
        ModelKind.SERVER,
        name=name[:200],
        root=str(root),
        relative_path=relative,
    )


def _version(upgrade: _Upgrade, tree: dict[str, Any], key: str) -> DatasetVersion | None:
    """The stored version whose rows match the one file `data.<key>` names, else a
    version made from that file (the dataset ingest), in the dataset named by its path."""
    place = f"data.{key}"
    files = tree.get("data", {}).get(key)
    if not isinstance(files, list) or len(files) != 1 or not isinstance(files[0], str):
        upgrade.kept(place, f"{files!r} is not one file (a dataset version is one file)")
        return None
    named = files[0]
    path = Path(in_var_dir(named, var_dir()))
    if not path.is_file():
        upgrade.kept(place, f"{named} is gone")
        return None
    data = tree.get("data", {})
    mapping = ColumnMapping(**{k: data[k] for k in MAPPING_KEYS if isinstance(data.get(k), str)})
    return upgrade.attempt(place, lambda: _stored_or_new(upgrade, path, named, mapping))


def _stored_or_new(
    upgrade: _Upgrade, path: Path, named: str, mapping: ColumnMapping
) -> DatasetVersion:
    project, user = upgrade.project, upgrade.run.created_by
    staging = staging_folder()
    try:
        ingested = ingest(path, path.name, mapping, staging)
        stored = (
            DatasetVersion.objects.filter(
                dataset__project=project,
                checksum=ingested.checksum,
                data_format=ingested.data_format,
                column_mapping=ingested.mapping,
            )
            .order_by("pk")
            .first()
        )
        if stored is not None:
            return stored
        name = named[-100:]
        dataset = Dataset.objects.filter(project=project, name=name).first() or create_dataset(
            project, name, "The file runs stored before datasets trained on.", user
        )
        message = f"{named}, from run {upgrade.run.pk} (stored before runs referenced datasets)"
        return store_version(dataset, ingested, message=message[:300], user=user)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _validation(
    upgrade: _Upgrade, tree: dict[str, Any], training: DatasetVersion | None
) -> ValidationChoice:
    """The choice the run's `config` validation meant (module docstring)."""
    run = upgrade.run
    if run.validation != "config":
        return ValidationChoice(cast(Validation, run.validation), run.validation_version)
    if run.dataset_version is not None:
        splits = run.dataset_version.stats.get("splits", [])
        names = {str(s.get("name")) for s in splits if isinstance(s, dict)}
        return ValidationChoice("held_out" if any(map(is_validation, names)) else "none")
    if not tree.get("data", {}).get("val_files"):
        return ValidationChoice("none")
    version = _version(upgrade, tree, "val_files")
    if version is None:
        return ValidationChoice("none")
    if training is not None and version.data_format != training.data_format:
        upgrade.kept(
            "data.val_files",
            f"its rows are {version.data_format} data and the training rows {training.data_format}",
        )
        return ValidationChoice("none")
    return ValidationChoice("dataset_version", version)

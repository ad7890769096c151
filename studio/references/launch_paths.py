"""The launcher's half of the resolver: a stored config's references become the paths
and URLs this launch uses. Nothing else writes a path into a trainer's config."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from studio.model_registry.models import RegisteredModel
from studio.references.locations import ModelUnavailable, checkpoint_folder, model_folder
from studio.references.run_inputs import REF
from studio.runs.folders import SPOOL_DIR, checkpoint_dir
from studio.runs.models import Run
from studio.telemetry.models import Checkpoint
from trainer.config.paths import path_fields, path_values, set_place

DatasetUrl = Callable[[int, str], str]


def _model_path(run: Run, pk: int) -> str:
    model = RegisteredModel.objects.filter(pk=pk, project_id=run.project_id).first()
    if model is None:
        raise ModelUnavailable(f"Model {pk} is not a model of this run's project.")
    return str(model_folder(model))


def _resolve(run: Run, reference: str, dataset_url: DatasetUrl) -> str | None:
    kind, _, rest = reference[len(REF) :].partition("/")
    pk_text, _, part = rest.partition("/")
    if kind == "run":
        folders = {"checkpoint.dir": checkpoint_dir(run.pk), "logging.spool_dir": SPOOL_DIR}
        if rest not in folders:
            raise ModelUnavailable(f"No folder of the run is known for {rest!r}.")
        return folders[rest]
    pk = int(pk_text)
    if kind == "model":
        return _model_path(run, pk)
    if kind == "checkpoint":  # an evaluation's: a checkpoint of a run of the project
        checkpoint = Checkpoint.objects.filter(pk=pk, run__project_id=run.project_id).first()
        if checkpoint is None:
            raise ModelUnavailable(f"Checkpoint {pk} is not a checkpoint of this run's project.")
        return str(checkpoint_folder(checkpoint))
    if kind == "dataset-version":
        if pk not in (run.dataset_version_id, run.validation_version_id):
            raise ModelUnavailable(f"Dataset version {pk} is not one of this run's inputs.")
        # Served by the studio, which picks the rows from the run's own choices.
        return dataset_url(run.pk, "train" if part == "train" else "val")
    if kind == "reward-version":
        return None  # the job writes the code to a file of its own (launch.entrypoint)
    raise ModelUnavailable(f"Unknown reference {reference!r} in the run's config.")


def fill_launch_paths(run: Run, tree: dict[str, Any], dataset_url: DatasetUrl) -> None:
    """Replace every reference in the path-bearing fields of `tree`, in place."""
    for path_field in path_fields():
        for place, value in path_values(tree, path_field.steps):
            if value is None:
                continue
            items = value if isinstance(value, list) else [value]
            if not all(isinstance(v, str) and v.startswith(REF) for v in items):
                raise ModelUnavailable(f"{place} holds a path, not a reference; refused.")
            resolved = [_resolve(run, v, dataset_url) for v in items]
            if isinstance(value, list):
                set_place(tree, place, [v for v in resolved if v is not None])
            else:
                set_place(tree, place, resolved[0])

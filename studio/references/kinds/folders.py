"""References no request input makes but a launch resolves: a folder of the run's own
(`resource:run/checkpoint.dir`, written for every run) and a checkpoint of a run of the
project (`resource:checkpoint/<id>`, an evaluated model: studio.evaluations.creation)."""

from __future__ import annotations

from studio.references.reference import Reference
from studio.references.registry import Launch, UnresolvedReference
from studio.runs.checkpoints import checkpoint_folder
from studio.runs.folders import SPOOL_DIR, checkpoint_dir
from studio.runs.models import Checkpoint
from trainer.config.paths import PathField, path_fields

RUN_FOLDER = "run"


def run_folder_references() -> dict[str, str | None]:
    """Dotted place -> reference for every run-folder field: a folder of the run's own,
    filled in by the launcher; an optional one (a JSONL copy of the records) stays off."""
    return {f.dotted: _run_folder(f) for f in path_fields() if f.kind.resource == "run_folder"}


def _run_folder(path_field: PathField) -> str | None:
    return None if path_field.optional else Reference(RUN_FOLDER, None, path_field.dotted).text


def resolve_run_folder(launch: Launch, reference: Reference) -> str:
    folders = {"checkpoint.dir": checkpoint_dir(launch.run.pk), "logging.spool_dir": SPOOL_DIR}
    if reference.pk is not None or reference.part not in folders:
        raise UnresolvedReference(f"No folder of the run is known for {reference.part!r}.")
    return folders[reference.part]


def resolve_checkpoint(launch: Launch, reference: Reference) -> str:
    checkpoint = (
        Checkpoint.objects.filter(pk=reference.pk, run__project_id=launch.run.project_id).first()
        if reference.pk is not None
        else None
    )
    if checkpoint is None:
        raise UnresolvedReference(
            f"Checkpoint {reference.pk} is not a checkpoint of this run's project."
        )
    return str(checkpoint_folder(checkpoint))

"""Adding a model to a project: the folder is inspected once, its facts kept."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from studio.model_registry.inspect import ModelInfo, NotAModel, inspect_folder
from studio.model_registry.locations import ModelUnavailable, model_folder
from studio.model_registry.models import ModelKind, RegisteredModel, role_of
from studio.projects.models import Project
from studio.runs.models import Checkpoint
from studio.runs.trainer_files import open_trainer_folder


def _inspect(record: RegisteredModel) -> ModelInfo:
    """What `record`'s folder holds; a run's export (the trainer's files) is read
    through its descriptor, following no link a trainer put there."""
    folder = model_folder(record)
    try:
        if record.kind != ModelKind.CHECKPOINT:
            return inspect_folder(folder)
        with open_trainer_folder(folder) as export:
            return inspect_folder(export)
    except NotAModel as exc:
        raise ModelUnavailable(str(exc)) from None
    except OSError as exc:  # changed since it was located (a trainer rewrote its export)
        raise ModelUnavailable(f"The model's folder can't be read: {exc}.") from None


def add_model_record(
    project: Project,
    user: Any,
    kind: str,
    name: str,
    root: str = "",
    relative_path: str = "",
    checkpoint: Checkpoint | None = None,
) -> RegisteredModel:
    """A new model of `project`; ModelUnavailable when its folder is missing or is not a
    model folder, or the name is taken."""
    record = RegisteredModel(
        project=project,
        name=name,
        kind=kind,
        root=root,
        relative_path=relative_path,
        checkpoint=checkpoint,
        created_by=user,
    )
    info = _inspect(record)
    record.info = info.as_json()
    record.role = role_of(info)
    try:
        with transaction.atomic():
            record.save()
    except IntegrityError:
        raise ModelUnavailable(f"The project already has a model named {name!r}.") from None
    return record

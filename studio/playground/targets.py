"""What a playground chats with: a model of the project or a checkpoint of one of its runs.

A request names one by id (`{"model": 3}` or `{"checkpoint": 12}`), never by path; the
folder is found on the server by the one resolver (studio.model_registry.locations; for
a checkpoint, studio.runs.checkpoints) when the model server starts, and re-checked then.
One model server serves one target, so its id is the target's: `p<project>-m<model>` or
`p<project>-c<checkpoint>`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from django.core.exceptions import ObjectDoesNotExist

from studio.model_registry.locations import ModelUnavailable, model_folder
from studio.model_registry.models import ModelRole, RegisteredModel
from studio.projects.models import Project
from studio.runs.checkpoints import CheckpointUnavailable, checkpoint_folder
from studio.runs.models import Checkpoint, RunKind

TargetKind = Literal["model", "checkpoint"]
MAX_CHECKPOINTS = 50  # newest checkpoints offered in the picker (each one is a disk check)
_SERVER_ID = re.compile(r"p(\d+)-([mc])(\d+)")
# What the model server loads (trainer.models.sources.resolve_model): a Hugging Face
# folder, or a trainer checkpoint on the base model its meta.json names.
HF_MODEL_FILE = "config.json"
CHECKPOINT_FILES = ("actor.pt", "meta.json")


class TargetError(Exception):
    """The target can't be chatted with; the message says why."""


@dataclass(frozen=True)
class Target:
    project_id: int
    kind: TargetKind
    pk: int
    label: str
    detail: str  # what it is, in a few words ("demo model", "run 7, step 4")

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.pk}"

    @property
    def server_id(self) -> str:
        return f"p{self.project_id}-{self.kind[0]}{self.pk}"


def parse_server_id(server_id: str) -> tuple[int, TargetKind, int] | None:
    match = _SERVER_ID.fullmatch(server_id)
    if match is None:
        return None
    kind: TargetKind = "model" if match[2] == "m" else "checkpoint"
    return int(match[1]), kind, int(match[3])


def _model_target(model: RegisteredModel) -> Target:
    return Target(model.project_id, "model", model.pk, model.name, model.get_kind_display())


def _checkpoint_target(project_id: int, checkpoint: Checkpoint) -> Target:
    run = checkpoint.run
    return Target(
        project_id,
        "checkpoint",
        checkpoint.pk,
        f"{run.name} @ step {checkpoint.step}",
        f"checkpoint of run {run.pk}",
    )


def find_target(project: Project | int, kind: TargetKind, pk: int) -> Target:
    """The project's model or checkpoint `pk`; the same error whether it is another
    project's or nobody's, so other projects' ids don't leak."""
    project_id = project if isinstance(project, int) else project.pk
    if kind == "model":
        model = RegisteredModel.objects.filter(pk=pk, project_id=project_id).first()
        if model is None:
            raise TargetError(f"No model {pk} in this project.")
        if model.role != ModelRole.POLICY:
            raise TargetError(f"Model {model.name!r} is a reward model; it can't chat.")
        return _model_target(model)
    checkpoint = (
        Checkpoint.objects.filter(pk=pk, run__project_id=project_id, run__kind=RunKind.TRAIN)
        .select_related("run")
        .first()
    )
    if checkpoint is None:
        raise TargetError(f"No checkpoint {pk} in this project.")
    return _checkpoint_target(project_id, checkpoint)


def target_folder(target: Target) -> str:
    """The target's folder on this machine, checked now (raises ModelUnavailable or
    CheckpointUnavailable)."""
    if target.kind == "model":
        return str(model_folder(RegisteredModel.objects.get(pk=target.pk)))
    return str(checkpoint_folder(Checkpoint.objects.select_related("run").get(pk=target.pk)))


def servable_folder(target: Target) -> str:
    """The target's folder, checked now as its model server will load it, so a server is
    never started for a model it can't load (raises TargetError saying why)."""
    try:
        folder = Path(target_folder(target))
    except (ModelUnavailable, CheckpointUnavailable, ObjectDoesNotExist) as exc:
        raise TargetError(str(exc) or f"{target.label} no longer exists.") from None
    if (folder / HF_MODEL_FILE).is_file() or all((folder / f).is_file() for f in CHECKPOINT_FILES):
        return str(folder)
    raise TargetError(
        f"{target.label} can't be loaded: {folder} holds neither a Hugging Face model "
        f"({HF_MODEL_FILE}) nor a trainer checkpoint ({' and '.join(CHECKPOINT_FILES)}); "
        "its files were removed or never written."
    )


def project_targets(project: Project) -> list[Target]:
    """Every policy model of the project, then its runs' reachable checkpoints, newest
    first (the latest attempt's, one per run and step)."""
    models = RegisteredModel.objects.filter(project=project, role=ModelRole.POLICY)
    found = [_model_target(m) for m in models.order_by("name")]
    seen: set[tuple[int, int]] = set()
    checkpoints = (
        Checkpoint.objects.filter(run__project=project, run__kind=RunKind.TRAIN)
        .select_related("run")
        .order_by("-run__created_at", "-step", "-attempt")
    )
    for checkpoint in checkpoints[: MAX_CHECKPOINTS * 2]:
        if (checkpoint.run_id, checkpoint.step) in seen or len(seen) >= MAX_CHECKPOINTS:
            continue
        try:
            checkpoint_folder(checkpoint)
        except CheckpointUnavailable:
            continue  # pruned, or on another machine
        seen.add((checkpoint.run_id, checkpoint.step))
        found.append(_checkpoint_target(project.pk, checkpoint))
    return found

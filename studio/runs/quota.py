"""A project's storage: what its files take on this studio's disk, and its quota.

Counted: every run's files (checkpoint folder and spool, measured by
studio.runs.run_files and kept on the run, so this never walks every folder), its
dataset versions' files (their recorded sizes) and its hub models' downloads (their
recorded progress). Not counted: demo and server models (the operator's folders, shared
by every project) and models made from a checkpoint (inside their run's folder, counted
with the run).

RLSTUDIO_PROJECT_STORAGE_QUOTA_GB (0: none) caps it: at or over the quota, no run of the
project is stored (`refuse_over_quota`, called by studio.runs.service.store_run, the one
way a run, a clone or an evaluation comes to be). Runs already queued or running go on:
the quota is checked when a run is made, not while it writes.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db.models import Sum

from studio.datasets.models import DatasetVersion
from studio.model_registry.models import ModelKind, RegisteredModel
from studio.projects.models import Project
from studio.runs import run_files
from studio.runs.models import Run, RunKind

GIB = 1024**3  # the quota setting's unit


class StorageQuotaExceeded(Exception):
    """The project is at or over its storage quota (HTTP 400); the message says how much
    it uses, its quota, and how to free space."""


@dataclass(frozen=True)
class ProjectStorage:
    used_bytes: int
    quota_bytes: int  # 0: no quota
    by_kind: dict[str, int]  # runs, evaluations, datasets, models

    @property
    def over_quota(self) -> bool:
        return self.quota_bytes > 0 and self.used_bytes >= self.quota_bytes


def quota_bytes() -> int:
    return int(settings.RLSTUDIO_PROJECT_STORAGE_QUOTA_GB * GIB)


def _hub_bytes(project: Project) -> int:
    progress = RegisteredModel.objects.filter(project=project, kind=ModelKind.HUB).values_list(
        "progress", flat=True
    )
    return sum(int(p.get("bytes_done", 0)) for p in progress if isinstance(p, dict))


def project_storage(project: Project) -> ProjectStorage:
    """What the project's files take, by kind, and its quota. A run not measured yet is
    measured now (once: the figure is kept)."""
    for pk in Run.objects.filter(project=project, storage_bytes__isnull=True).values_list(
        "pk", flat=True
    ):
        run_files.measure(pk)
    runs = Run.objects.filter(project=project)
    by_kind = {
        "runs": runs.filter(kind=RunKind.TRAIN).aggregate(n=Sum("storage_bytes"))["n"] or 0,
        "evaluations": runs.filter(kind=RunKind.EVALUATION).aggregate(n=Sum("storage_bytes"))["n"]
        or 0,
        "datasets": DatasetVersion.objects.filter(dataset__project=project).aggregate(
            n=Sum("size_bytes")
        )["n"]
        or 0,
        "models": _hub_bytes(project),
    }
    return ProjectStorage(sum(by_kind.values()), quota_bytes(), by_kind)


def size_text(size: int) -> str:
    """Bytes in words for a message: `3.2 GiB`, `512 MiB`, `40 KiB`, `12 bytes`."""
    for unit, scale in (("GiB", GIB), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}".replace(".0 ", " ")
    return f"{size} bytes"


def refuse_over_quota(project: Project) -> None:
    """StorageQuotaExceeded when the project is at or over its storage quota."""
    if quota_bytes() <= 0:
        return
    storage = project_storage(project)
    if storage.over_quota:
        raise StorageQuotaExceeded(
            f"Project {project.slug!r} uses {size_text(storage.used_bytes)} of its "
            f"{size_text(storage.quota_bytes)} storage quota "
            "(RLSTUDIO_PROJECT_STORAGE_QUOTA_GB), so no new run can be stored. Delete runs "
            "you no longer need (their checkpoints go with them; archiving hides a run but "
            "frees nothing), or ask an administrator to raise the quota."
        )

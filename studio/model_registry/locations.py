"""Where a project's models lie on the server, and the checks that they lie there.

Every use of a model folder (a run's model or reward model, a test-run's sampler) goes
through `model_folder`, which decides from the record's kind, never from a path a
request sent: a demo asset under the studio's var dir, a folder under one of the
configured roots (symlinks resolved, nothing outside the roots), or the Hugging Face
export in a run's own checkpoint folder (studio.runs.checkpoints.checkpoint_export),
which the trainer writes, so no symlink in it is followed (studio.runs.trainer_files).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from studio.model_registry.inspect import ADAPTER_CONFIG, NotAModel, inspect_folder
from studio.model_registry.models import (
    ModelKind,
    ModelRole,
    ModelStatus,
    RegisteredModel,
    role_of,
)
from studio.paths import var_dir
from studio.runs.checkpoints import CheckpointUnavailable, checkpoint_export

DEMO_ASSETS = ("demo-model", "demo-model-tools", "demo-reward-model")
MAX_DEPTH = 3  # how deep under a root a model folder is looked for
MAX_FOLDERS = 2_000  # folders visited per root, so a huge root can't stall a request
HUB_CACHE = "model-cache"  # hub models, under the var dir (studio.model_registry.hub)


class ModelUnavailable(Exception):
    """The model's files are not where its record says; the message says why."""


@dataclass(frozen=True)
class FolderChoice:
    """A model folder the server offers: `source` is its opaque id in requests."""

    source: str
    kind: str
    name: str  # relative to its root
    root: Path

    @property
    def role(self) -> str:
        """policy or reward, by the architecture its config.json names; adapter for a peft
        adapter folder."""
        try:
            return role_of(inspect_folder(self.root / self.name))
        except NotAModel:
            return ModelRole.POLICY


def model_roots() -> list[Path]:
    """RLSTUDIO_MODEL_ROOTS: folders whose model folders the studio offers (resolved)."""
    return [Path(p).resolve() for p in settings.RLSTUDIO_MODEL_ROOTS if p]


def _source_id(kind: str, root: Path, relative: str) -> str:
    digest = hashlib.sha256(f"{kind}\0{root}\0{relative}".encode()).hexdigest()[:20]
    return f"{kind}-{digest}"


MARKERS = ("config.json", ADAPTER_CONFIG)  # a model folder's, a peft adapter folder's


def holds_model(folder: Path) -> bool:
    """`folder` is a model folder (config.json) or a peft adapter folder."""
    return any((folder / marker).is_file() for marker in MARKERS)


def _model_folders(root: Path) -> Iterator[Path]:
    """Folders under `root` holding a model or an adapter, breadth first, bounded."""
    queue, seen = [(root, 0)], 0
    while queue and seen < MAX_FOLDERS:
        folder, depth = queue.pop(0)
        seen += 1
        if holds_model(folder) and folder != root:
            yield folder
            continue
        if depth >= MAX_DEPTH:
            continue
        try:
            children = sorted(
                p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")
            )
        except OSError:
            continue
        queue += [(child, depth + 1) for child in children]


def inside(root: Path, path: Path) -> Path | None:
    """`path` with symlinks resolved, if it lies inside `root` (resolved); else None."""
    resolved = path.resolve()
    return resolved if resolved.is_relative_to(root.resolve()) else None


def offered_folders() -> list[FolderChoice]:
    """The demo models that are built and every model folder under the roots."""
    var = var_dir()
    found = [
        FolderChoice(_source_id("demo", var, name), ModelKind.DEMO, name, var)
        for name in DEMO_ASSETS
        if (var / name / "config.json").is_file()
    ]
    for root in model_roots():
        for folder in _model_folders(root):
            if inside(root, folder) is None:
                continue  # a symlink out of the root
            relative = str(folder.relative_to(root))
            found.append(
                FolderChoice(_source_id("server", root, relative), ModelKind.SERVER, relative, root)
            )
    return found


def choice_by_source(source: str) -> FolderChoice | None:
    return next((c for c in offered_folders() if c.source == source), None)


def model_folder(model: RegisteredModel) -> Path:
    """The folder `model` names, re-checked now (roots can change, files can go)."""
    if model.kind == ModelKind.CHECKPOINT:
        if model.checkpoint is None:
            raise ModelUnavailable(f"Model {model.name!r} lost its checkpoint.")
        try:
            return checkpoint_export(model.checkpoint)
        except CheckpointUnavailable as exc:
            raise ModelUnavailable(str(exc)) from None
    if model.status != ModelStatus.READY:
        done = model.progress.get("bytes_done", 0)
        total = model.progress.get("bytes_total") or 0
        share = f" ({100 * done // total}%)" if total else ""
        raise ModelUnavailable(
            f"Model {model.name!r} is {model.get_status_display().lower()}{share}"
            + (f": {model.error}" if model.error else "; use it once it is ready.")
        )
    if model.kind == ModelKind.DEMO:
        root = var_dir()
        if model.relative_path not in DEMO_ASSETS:
            raise ModelUnavailable(f"{model.relative_path!r} is not a demo model.")
    elif model.kind == ModelKind.HUB:
        root = var_dir() / HUB_CACHE
    else:
        root = Path(model.root)
        if root not in model_roots():
            raise ModelUnavailable(
                f"Model {model.name!r} lies under {model.root}, which is no longer one of the "
                "server's model roots (RLSTUDIO_MODEL_ROOTS)."
            )
    if model.kind == ModelKind.DEMO:
        # One of a fixed list of names in the studio's own var dir, which the operator may
        # have linked elsewhere: no request chose it, so a link out is theirs to make.
        folder: Path | None = root / model.relative_path
    else:
        folder = inside(root, root / model.relative_path)
    if folder is None or not holds_model(folder):
        raise ModelUnavailable(f"Model {model.name!r} is no longer on the server's disk.")
    return folder

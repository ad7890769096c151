"""Where a model's weights and tokenizer come from: a Hugging Face folder, or a trainer
checkpoint (`step_*/` with `actor.pt` and `meta.json`) on the base model it names.

Read by the `sample` command, evaluations and the playground. torch is imported only when
weights are loaded, so resolving a folder stays light.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class ModelSourceError(ValueError):
    """The model folder can't be used; the message says what to fix."""


@dataclass(frozen=True)
class ModelSource:
    """Where weights and tokenizer come from: a HF folder, or a checkpoint on its base."""

    base: Path  # HF folder: architecture, tokenizer (and the weights when no checkpoint)
    dtype: str = "float32"
    checkpoint: Path | None = None  # trainer checkpoint folder holding actor.pt


def resolve_model(path: str | Path) -> ModelSource:
    """A HF folder, or a trainer checkpoint folder (``actor.pt`` + ``meta.json``)."""
    folder = Path(path)
    if not folder.is_dir():
        raise ModelSourceError(f"model folder {folder} does not exist (or is not a folder)")
    if (folder / "config.json").is_file():
        return ModelSource(base=folder)
    meta_path, actor = folder / "meta.json", folder / "actor.pt"
    if not (meta_path.is_file() and actor.is_file()):
        raise ModelSourceError(
            f"{folder} is not a model folder: expected a Hugging Face folder (config.json) "
            "or a trainer checkpoint (actor.pt and meta.json)"
        )
    try:
        meta = json.loads(meta_path.read_text())
        model = meta["config"]["model"]
        base, dtype = Path(str(model["path"])), str(model["dtype"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelSourceError(
            f"{meta_path} does not name the checkpoint's base model (config.model.path): "
            f"{type(exc).__name__}: {exc}"
        ) from None
    if not (base / "config.json").is_file():
        raise ModelSourceError(
            f"the checkpoint {folder} was trained from {base}, which is no longer a model "
            "folder (no config.json); its architecture and tokenizer are needed to load it"
        )
    return ModelSource(base=base, dtype=dtype, checkpoint=folder)


def actor_state(path: Path, device: Any) -> Any:
    """A checkpoint's actor weights (a state dict of tensors, nothing else unpickled)."""
    import pickle

    import torch

    try:
        # weights_only: a checkpoint path comes from a run's report; never unpickle code
        return torch.load(path, map_location=device, weights_only=True)
    except pickle.UnpicklingError:
        raise ModelSourceError(
            f"{path} is not a state dict of tensors (torch.load with weights_only refused it)"
        ) from None

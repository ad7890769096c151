"""Atomic, resumable checkpoints and Hugging Face export.

A checkpoint is a folder `step_00000012/` holding the actor (and critic) weights,
optimizer and scheduler states, sampler position, RNG states, KL controller and
step. It is written under a temporary name, every file fsynced, then renamed:
a crash leaves either the whole checkpoint or none. `meta.json` is written last,
so a folder without it is never taken for a checkpoint.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from trainer.state import TrainingState

META = "meta.json"
PREFIX = "step_"


@dataclass
class Checkpoint:
    step: int
    path: Path


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _save(obj: Any, path: Path) -> None:
    with open(path, "wb") as handle:
        torch.save(obj, handle)
        handle.flush()
        os.fsync(handle.fileno())


def rng_state() -> dict[str, Any]:
    state: dict[str, Any] = {"torch": torch.get_rng_state(), "python": random.getstate()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    random.setstate(state["python"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save_checkpoint(
    state: TrainingState, step: int, sampler_state: dict[str, Any], directory: str | Path
) -> Checkpoint:
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"{PREFIX}{step:08d}"
    tmp = root / f".tmp-{final.name}-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    _save(state.actor.state_dict(), tmp / "actor.pt")
    _save(state.optimizer.state_dict(), tmp / "actor_optim.pt")
    if state.critic is not None and state.critic_optimizer is not None:
        _save(state.critic.state_dict(), tmp / "critic.pt")
        _save(state.critic_optimizer.state_dict(), tmp / "critic_optim.pt")
    _save(
        {
            "scheduler": state.scheduler.state_dict(),
            "critic_scheduler": (
                state.critic_scheduler.state_dict() if state.critic_scheduler else None
            ),
            "sampler": sampler_state,
            "rng": rng_state(),
            "update_generator": state.update_generator.get_state(),
            "kl_ctrl": state.kl_ctrl.state_dict(),
        },
        tmp / "trainer_state.pt",
    )
    meta = {"step": step, "saved_at": time.time(), "config": state.cfg.model_dump(mode="json")}
    with open(tmp / META, "w") as handle:
        json.dump(meta, handle, indent=1)
        handle.flush()
        os.fsync(handle.fileno())
    _fsync_dir(tmp)
    if final.exists():  # a re-run of the same step replaces it whole
        shutil.rmtree(final)
    os.rename(tmp, final)
    _fsync_dir(root)
    return Checkpoint(step=step, path=final)


def list_checkpoints(directory: str | Path) -> list[Checkpoint]:
    root = Path(directory)
    if not root.is_dir():
        return []
    found = [
        Checkpoint(step=int(p.name[len(PREFIX) :]), path=p)
        for p in root.iterdir()
        if p.is_dir() and p.name.startswith(PREFIX) and (p / META).exists()
    ]
    return sorted(found, key=lambda c: c.step)


def latest_checkpoint(directory: str | Path) -> Checkpoint | None:
    found = list_checkpoints(directory)
    return found[-1] if found else None


def prune_checkpoints(directory: str | Path, keep_last: int) -> None:
    for old in list_checkpoints(directory)[:-keep_last]:
        shutil.rmtree(old.path, ignore_errors=True)


def _load(path: Path) -> Any:
    return torch.load(path, map_location="cpu", weights_only=False)


def load_checkpoint(state: TrainingState, checkpoint: Checkpoint) -> dict[str, Any]:
    """Restore everything into `state`; returns the sampler state for the data loop."""
    path = checkpoint.path
    state.actor.load_state_dict(_load(path / "actor.pt"))
    state.optimizer.load_state_dict(_load(path / "actor_optim.pt"))
    if state.critic is not None and state.critic_optimizer is not None:
        state.critic.load_state_dict(_load(path / "critic.pt"))
        state.critic_optimizer.load_state_dict(_load(path / "critic_optim.pt"))
    extra = _load(path / "trainer_state.pt")
    state.scheduler.load_state_dict(extra["scheduler"])
    if state.critic_scheduler is not None and extra["critic_scheduler"] is not None:
        state.critic_scheduler.load_state_dict(extra["critic_scheduler"])
    restore_rng(extra["rng"])
    state.update_generator.set_state(extra["update_generator"])
    state.kl_ctrl.load_state_dict(extra["kl_ctrl"])
    return dict(extra["sampler"])


def export_hf(state: TrainingState, out_dir: str | Path) -> Path:
    """Write a Hugging Face folder (config, safetensors weights, tokenizer)."""
    out = Path(out_dir)
    tmp = out.with_name(f".tmp-{out.name}-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    state.actor.save_pretrained(tmp, safe_serialization=True)  # type: ignore[operator]
    state.tokenizer.save_pretrained(tmp)  # type: ignore[attr-defined]
    if out.exists():
        shutil.rmtree(out)
    os.rename(tmp, out)
    return out

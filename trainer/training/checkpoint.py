"""Atomic, resumable checkpoints and Hugging Face export.

A checkpoint is a folder `step_00000012/` holding the actor (and critic) weights,
optimizer and scheduler states, sampler position, RNG states, KL controller and
step. It is written under a temporary name, every file fsynced, then renamed:
a crash leaves either the whole checkpoint or none. `meta.json` is written last,
so a folder without it is never taken for a checkpoint. The models' part comes from
`ModelRoles.model_states()` in the single-process format, so a checkpoint written by
N distributed workers resumes on one process and the reverse.
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

from trainer.training.roles import ModelRoles, ModelStates, StepContext

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


def _write_checkpoint(
    tmp: Path,
    state: StepContext,
    roles: ModelRoles,
    step: int,
    sampler_state: dict[str, Any],
) -> None:
    """Every file of a checkpoint, into `tmp`, each flushed to disk."""
    models = roles.model_states()
    _save(models.actor, tmp / "actor.pt")
    _save(models.actor_optim, tmp / "actor_optim.pt")
    if models.critic is not None and models.critic_optim is not None:
        _save(models.critic, tmp / "critic.pt")
        _save(models.critic_optim, tmp / "critic_optim.pt")
    _save(
        {
            "scheduler": models.scheduler,
            "critic_scheduler": models.critic_scheduler,
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


def save_checkpoint(
    state: StepContext,
    roles: ModelRoles,
    step: int,
    sampler_state: dict[str, Any],
    directory: str | Path,
) -> Checkpoint:
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"{PREFIX}{step:08d}"
    tmp = root / f".tmp-{final.name}-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    try:
        _write_checkpoint(tmp, state, roles, step, sampler_state)
    except BaseException:
        # A cancel (or a full disk) mid-save: leave no half-written folder behind.
        shutil.rmtree(tmp, ignore_errors=True)
        raise
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


def load_checkpoint(
    state: StepContext, roles: ModelRoles, checkpoint: Checkpoint
) -> dict[str, Any]:
    """Restore everything into `state` and `roles`; returns the sampler state."""
    path = checkpoint.path
    extra = _load(path / "trainer_state.pt")
    has_critic = (path / "critic.pt").exists()
    roles.load_model_states(
        ModelStates(
            actor=_load(path / "actor.pt"),
            actor_optim=_load(path / "actor_optim.pt"),
            scheduler=extra["scheduler"],
            critic=_load(path / "critic.pt") if has_critic else None,
            critic_optim=_load(path / "critic_optim.pt") if has_critic else None,
            critic_scheduler=extra["critic_scheduler"],
        )
    )
    restore_rng(extra["rng"])
    state.update_generator.set_state(extra["update_generator"])
    state.kl_ctrl.load_state_dict(extra["kl_ctrl"])
    return dict(extra["sampler"])


def export_hf(state: StepContext, roles: ModelRoles, out_dir: str | Path) -> Path:
    """Write a Hugging Face folder (config, safetensors weights, tokenizer)."""
    out = Path(out_dir)
    tmp = out.with_name(f".tmp-{out.name}-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    roles.save_pretrained(tmp)
    state.tokenizer.save_pretrained(tmp)
    if out.exists():
        shutil.rmtree(out)
    os.rename(tmp, out)
    return out

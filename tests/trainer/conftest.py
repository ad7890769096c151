"""Trainer test helpers (the `demo_assets` fixture itself is in tests/conftest.py)."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
from pathlib import Path

import pytest

from trainer.config import RunConfig, load_config


def demo_config(root: Path, tmp: Path, *overrides: str, preset: str | None = None) -> RunConfig:
    """A run on the demo assets writing only under `tmp`."""
    base = [
        f"model.path={root / 'model'}",
        f"data.train_files=[{root / 'data' / 'arith' / 'train.parquet'}]",
        f"data.val_files=[{root / 'data' / 'arith' / 'test.parquet'}]",
        f"checkpoint.dir={tmp / 'ckpt'}",
        "logging.console=false",
        "checkpoint.save_hf=false",
    ]
    return load_config(overrides=base + list(overrides), preset=preset)


@pytest.fixture(scope="session")
def demo_reward_model(demo_assets: Path) -> Path:
    """The demo reward model (trainer.models.demo_reward) on the cached demo model, cached
    beside it under a key of its builder's source (a few seconds to build)."""
    from trainer.models.demo_reward import build_demo_reward_model

    source = Path(__file__).resolve().parents[2] / "trainer" / "models" / "demo_reward.py"
    key = hashlib.sha256(source.read_bytes()).hexdigest()[:12]
    folder = demo_assets / f"reward-model-{key}"
    with open(demo_assets.parent / "demo.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "config.json").exists():
            building = demo_assets.parent / f"building-rm-{os.getpid()}"
            shutil.rmtree(building, ignore_errors=True)
            build_demo_reward_model(demo_assets / "model", building, seed=0)
            building.rename(folder)
    return folder

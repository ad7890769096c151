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


TOOLS_MODEL_SOURCES = (
    "trainer/models/demo_tools.py",
    "trainer/env/chat.py",
    "trainer/env/toolcalls.py",
)


@pytest.fixture(scope="session")
def demo_tools_assets(demo_assets: Path) -> Path:
    """The demo tools model (`model/`) and the tools-arith data (`data/tools-arith/`), built
    by trainer.models.demo_tools on the cached demo model, cached beside it under a key of
    its sources (the warm start takes a minute or two on a busy machine)."""
    from trainer.models.demo_tools import build_demo_tools_model

    repo = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for name in TOOLS_MODEL_SOURCES:
        digest.update((repo / name).read_bytes())
    folder = demo_assets / f"tools-{digest.hexdigest()[:12]}"
    with open(demo_assets.parent / "demo.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "model" / "config.json").exists():
            building = demo_assets.parent / f"building-tools-{os.getpid()}"
            shutil.rmtree(building, ignore_errors=True)
            build_demo_tools_model(demo_assets / "model", building / "model", building / "data")
            building.rename(folder)
    return folder


def tools_config(assets: Path, tmp: Path, *overrides: str) -> RunConfig:
    """A grpo-tools-arith run on the test-built tools model, writing only under `tmp`."""
    data = assets / "data" / "tools-arith"
    base = [
        f"model.path={assets / 'model'}",
        f"data.train_files=[{data / 'train.parquet'}]",
        f"data.val_files=[{data / 'test.parquet'}]",
        f"checkpoint.dir={tmp / 'ckpt'}",
        "logging.console=false",
        "checkpoint.save_hf=false",
    ]
    return load_config(overrides=base + list(overrides), preset="grpo-tools-arith")

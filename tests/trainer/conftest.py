"""Shared fixtures: the offline demo model and toy datasets, built once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainer.config import RunConfig, load_config


@pytest.fixture(scope="session")
def demo_assets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from trainer.models.demo import build_demo_assets

    root = tmp_path_factory.mktemp("demo")
    build_demo_assets(root / "model", root / "data", seed=0)
    return root


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

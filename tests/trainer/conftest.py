"""Trainer test helpers (the `demo_assets` fixture itself is in tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

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

"""Trainer test helpers (the `demo_assets` and `demo_tools_assets` fixtures themselves are
in tests/conftest.py)."""

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

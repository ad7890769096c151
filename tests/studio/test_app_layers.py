"""The app layering contract in pyproject.toml names the modules of the apps it splits
(runs, telemetry, the playground) one by one; a module missing from it would be left out
of the layering silently, so every module of those apps must be named there."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = "the studio's apps: features over a run's life over its inputs over the run's record"
SPLIT = ("studio.runs", "studio.telemetry", "studio.telemetry.ingest", "studio.playground")


def _layer_modules() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contract = next(c for c in config["tool"]["importlinter"]["contracts"] if c["name"] == CONTRACT)
    return {
        name.strip()
        for layer in contract["layers"]
        for name in layer.replace("|", ":").split(":")
        if name.strip()
    }


def _children(package: str) -> set[str]:
    folder = ROOT.joinpath(*package.split("."))
    return {
        f"{package}.{path.stem}"
        for path in folder.iterdir()
        if path.stem not in ("__init__", "migrations", "__pycache__")
        and (path.suffix == ".py" or (path / "__init__.py").is_file())
    }


def _covered(module: str, named: set[str]) -> bool:
    parts = module.split(".")
    return any(".".join(parts[:i]) in named for i in range(2, len(parts) + 1))


def test_every_module_of_a_split_app_is_in_the_app_layers():
    named = _layer_modules()
    for package in SPLIT:
        children = _children(package) - set(SPLIT)
        missing = sorted(m for m in children if not _covered(m, named))
        assert not missing, f"{missing} are in no layer of {CONTRACT!r} (pyproject.toml)."


def test_the_layers_name_only_modules_that_exist():
    for module in _layer_modules():
        path = ROOT.joinpath(*module.split("."))
        assert path.with_suffix(".py").is_file() or (path / "__init__.py").is_file(), module

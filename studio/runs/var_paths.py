"""A run config's `var/...` paths name the studio's var dir, wherever that is.

The config's defaults are relative paths under `var/` (`model.path: var/demo-model`,
the demo data files, the demo reward model): the assets `rlstudio up` builds in the
studio's var dir (RLSTUDIO_VAR_DIR). A trainer, though, resolves a relative path against
its own working directory (RLSTUDIO_TRAINER_WORKDIR, this checkout by default), which
finds them only while the var dir is the checkout's `var/`. So the launch makes each
such path absolute under the studio's var dir; other paths are left as they are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trainer.config.paths import path_fields, path_values, set_place

VAR_PREFIX = "var/"


def in_var_dir(path: str, var: Path) -> str:
    """`var/x` -> `<var>/x`; any other path unchanged."""
    return str(var / path[len(VAR_PREFIX) :]) if path.startswith(VAR_PREFIX) else path


def resolve_var_paths(tree: dict[str, Any], var: Path) -> None:
    """Makes the `var/...` paths of a config tree absolute under `var`, in place: the
    path-bearing fields that name inputs (trainer.config.paths). A run's own folders
    (spool, checkpoints) stay relative to the trainer's working directory."""
    for field in path_fields():
        if field.kind.resource == "run_folder":
            continue
        for place, value in path_values(tree, field.steps):
            if isinstance(value, str):
                set_place(tree, place, in_var_dir(value, var))
            elif isinstance(value, list):
                set_place(
                    tree, place, [in_var_dir(v, var) if isinstance(v, str) else v for v in value]
                )

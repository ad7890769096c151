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

VAR_PREFIX = "var/"
# (section, ..., field) of the config's path fields; a list field holds several paths.
PATH_FIELDS: tuple[tuple[str, ...], ...] = (
    ("model", "path"),
    ("data", "train_files"),
    ("data", "val_files"),
    ("reward", "model", "path"),
    ("reward", "custom_path"),
)


def in_var_dir(path: str, var: Path) -> str:
    """`var/x` -> `<var>/x`; any other path unchanged."""
    return str(var / path[len(VAR_PREFIX) :]) if path.startswith(VAR_PREFIX) else path


def resolve_var_paths(tree: dict[str, Any], var: Path) -> None:
    """Makes the `var/...` paths of a config tree absolute under `var`, in place."""
    for *sections, name in PATH_FIELDS:
        parent: Any = tree
        for section in sections:
            parent = parent.get(section) if isinstance(parent, dict) else None
        if not isinstance(parent, dict):
            continue
        value = parent.get(name)
        if isinstance(value, str):
            parent[name] = in_var_dir(value, var)
        elif isinstance(value, list):
            parent[name] = [in_var_dir(v, var) if isinstance(v, str) else v for v in value]

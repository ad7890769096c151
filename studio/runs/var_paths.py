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
EVERY_ITEM = "*"
# (section, ..., field) of the config's path fields; a list field holds several paths, and
# EVERY_ITEM steps into each element of a list of sections.
PATH_FIELDS: tuple[tuple[str, ...], ...] = (
    ("model", "path"),
    ("data", "train_files"),
    ("data", "val_files"),
    ("reward", "model", "path"),
    ("reward", "extra_models", EVERY_ITEM, "path"),
    ("reward", "custom_path"),
)


def in_var_dir(path: str, var: Path) -> str:
    """`var/x` -> `<var>/x`; any other path unchanged."""
    return str(var / path[len(VAR_PREFIX) :]) if path.startswith(VAR_PREFIX) else path


def resolve_var_paths(tree: dict[str, Any], var: Path) -> None:
    """Makes the `var/...` paths of a config tree absolute under `var`, in place."""
    for *sections, name in PATH_FIELDS:
        for parent in _sections_at(tree, sections):
            value = parent.get(name)
            if isinstance(value, str):
                parent[name] = in_var_dir(value, var)
            elif isinstance(value, list):
                parent[name] = [in_var_dir(v, var) if isinstance(v, str) else v for v in value]


def _sections_at(tree: Any, sections: list[str]) -> list[dict[str, Any]]:
    """The dicts that `sections` leads to in `tree` (several through an EVERY_ITEM)."""
    found = [tree]
    for section in sections:
        if section == EVERY_ITEM:
            found = [item for parent in found if isinstance(parent, list) for item in parent]
        else:
            found = [parent.get(section) for parent in found if isinstance(parent, dict)]
    return [parent for parent in found if isinstance(parent, dict)]

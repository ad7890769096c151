"""A stored config's `var/...` paths name the studio's var dir, wherever that is.

The config's defaults are relative paths under `var/` (`model.path: var/demo-model`,
the demo data files, the demo reward model): the assets `rlstudio up` builds in the
studio's var dir (RLSTUDIO_VAR_DIR). Runs stored before runs referenced resources name
them so; bringing such a run to references (studio.references.stored_runs) finds each
under the studio's var dir.
"""

from __future__ import annotations

from pathlib import Path

VAR_PREFIX = "var/"


def in_var_dir(path: str, var: Path) -> str:
    """`var/x` -> `<var>/x`; any other path unchanged."""
    return str(var / path[len(VAR_PREFIX) :]) if path.startswith(VAR_PREFIX) else path

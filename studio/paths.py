"""Filesystem locations shared by settings, the CLI and the supervisor.

Kept free of Django imports so `rlstudio` can compute paths before settings load.
"""

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def var_dir() -> Path:
    """Where the embedded stack keeps its state (database, redis, secrets, logs)."""
    return Path(os.environ.get("RLSTUDIO_VAR_DIR", REPO_ROOT / "var")).resolve()

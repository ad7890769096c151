"""Filesystem locations shared by settings, the CLI and the supervisor.

Kept free of Django imports so `rlstudio` can compute paths before settings load.
"""

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def var_dir() -> Path:
    """Where the embedded stack keeps its state (database, redis, secrets, logs)."""
    return Path(os.environ.get("RLSTUDIO_VAR_DIR", REPO_ROOT / "var")).resolve()


def demo_asset_dirs(var: Path) -> dict[str, Path]:
    """`make-demo-model`'s output folders (by option), each under the studio's var dir: the
    paths the presets name (`var/demo-model-tools`, ...) resolve there at launch
    (runs.var_paths), while the build's own defaults are relative to its working directory."""
    return {
        "--model-dir": var / "demo-model",
        "--data-dir": var / "demo-data",
        "--reward-model-dir": var / "demo-reward-model",
        "--tools-model-dir": var / "demo-model-tools",
    }

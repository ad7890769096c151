"""A run's own folders on the machines that train it; only the launcher points the
trainer at them, and the studio serves only what lies inside them."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

# The trainer's spool, relative to its working directory (local to the machine it runs
# on: a remote cluster shares no filesystem with the studio).
SPOOL_DIR = "var/spool"


def checkpoint_dir(run_id: int) -> str:
    """One folder per run, shared by its attempts: a resume finds the latest checkpoint
    there (`checkpoint.resume=auto`), and no two runs can overwrite each other's."""
    return str(Path(settings.RLSTUDIO_CHECKPOINT_ROOT) / f"run-{run_id}")

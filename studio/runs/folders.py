"""A run's own folders on the machines that train it; only the launcher points the
trainer at them, and the studio serves only what lies inside them."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

# The trainer's spool, relative to its working directory (local to the machine it runs
# on: a remote cluster shares no filesystem with the studio).
SPOOL_DIR = "var/spool"


# Playground model servers' own folders (one per server, under this one), beside the
# runs' folders under the checkpoint root: each job's secret file goes there (runs.handoff).
PLAYGROUND_FOLDER = "playground"


def run_folder_name(run_id: int) -> str:
    return f"run-{run_id}"


def checkpoint_dir(run_id: int) -> str:
    """One folder per run, shared by its attempts: a resume finds the latest checkpoint
    there (`checkpoint.resume=auto`), and no two runs can overwrite each other's."""
    return str(Path(settings.RLSTUDIO_CHECKPOINT_ROOT) / run_folder_name(run_id))

"""A run's files on the studio's machine: how many bytes they take, and removing them.

A run writes two things here: its checkpoint folder (`RLSTUDIO_CHECKPOINT_ROOT/run-<id>`,
studio.runs.folders: checkpoints, the Hugging Face export, the job's secret file) and
its spool (`<RLSTUDIO_TRAINER_WORKDIR>/var/spool/run-<id>-attempt-<n>.*`, the records
the trainer keeps until the studio has them). On a cluster that shares no filesystem
with the studio the spool is on the nodes, and only what is here is counted or removed.

The trainer account owns the checkpoint folder (studio.runs.trainer_files), so any name
in it may be a symlink: sizes are read through descriptors with no link followed, and
removal goes through `shutil.rmtree` relative to the root's descriptor (which never
follows a link on Linux), so a link planted there loses its own name and nothing more.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import stat
from collections.abc import Iterable
from pathlib import Path

from django.conf import settings

from studio.runs.folders import SPOOL_DIR, checkpoint_dir, run_folder_name
from studio.runs.models import Run
from studio.runs.trainer_files import LinkRefused, WrongKind, open_trainer_folder

logger = logging.getLogger(__name__)

ROOT_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


def checkpoint_bytes(run_id: int) -> int:
    """Bytes of the regular files in the run's checkpoint folder (0 when it has none, or
    when its name is a link: what that leads to is not the run's). A folder nested past
    the walk's depth limit counts what was read before it."""
    total = 0
    try:
        with open_trainer_folder(Path(checkpoint_dir(run_id))) as folder:
            for entry in folder.walk():
                if stat.S_ISREG(entry.info.st_mode):
                    total += entry.info.st_size
    except (FileNotFoundError, NotADirectoryError, LinkRefused, WrongKind):
        return 0
    except OSError as exc:  # too deep, or unreadable part-way: what was counted stands
        logger.warning("run %s: checkpoint folder only partly measured: %s", run_id, exc)
    return total


def spool_files(run_id: int) -> list[Path]:
    """The run's spool files on this machine (every attempt's data, acked, lock and
    rejected files)."""
    folder = Path(settings.RLSTUDIO_TRAINER_WORKDIR) / SPOOL_DIR
    pattern = re.compile(rf"run-{run_id}-attempt-\d+\.[a-z]+")
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(folder / name for name in names if pattern.fullmatch(name))


def spool_bytes(run_id: int) -> int:
    total = 0
    for path in spool_files(run_id):
        try:
            info = path.lstat()
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            total += info.st_size
    return total


def run_bytes(run_id: int) -> int:
    """Bytes of every file the run keeps on this machine."""
    return checkpoint_bytes(run_id) + spool_bytes(run_id)


def measure(run_id: int) -> int:
    """Measure the run's files and keep the figure on the run (`Run.storage_bytes`)."""
    size = run_bytes(run_id)
    Run.objects.filter(pk=run_id).update(storage_bytes=size)
    return size


def _remove_checkpoint_folder(run_id: int) -> None:
    root = Path(settings.RLSTUDIO_CHECKPOINT_ROOT)
    name = run_folder_name(run_id)
    try:
        root_fd = os.open(root, ROOT_FLAGS)  # the operator's path: its own links are theirs
    except FileNotFoundError:
        return
    try:
        try:
            info = os.stat(name, dir_fd=root_fd, follow_symlinks=False)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(info.st_mode):
            shutil.rmtree(name, dir_fd=root_fd)
        else:  # a link or a file the trainer put in the folder's place: only the name goes
            os.unlink(name, dir_fd=root_fd)
    finally:
        os.close(root_fd)


def remove(run_id: int) -> None:
    """Remove the run's checkpoint folder and spool files. What can't be removed is
    logged with its path (for the operator) and left: the run's rows are gone by then."""
    try:
        _remove_checkpoint_folder(run_id)
    except OSError as exc:
        logger.error(
            "run %s: checkpoint folder %s not removed: %s", run_id, checkpoint_dir(run_id), exc
        )
    for path in spool_files(run_id):
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            logger.error("run %s: spool file %s not removed: %s", run_id, path, exc)


def remove_each(run_ids: Iterable[int]) -> None:
    for run_id in run_ids:
        remove(run_id)

"""Handing a Ray job its one-time bootstrap secret through a file, never through Ray.

Ray shows every job's environment, entrypoint and metadata to whoever reaches its
dashboard (`/api/jobs/`, with Ray's token for whoever holds it), and a local user polling
the job list could redeem a run's secret before its trainer did. So the launcher writes
the secret, before it submits, into a file in the job's own folder under
RLSTUDIO_CHECKPOINT_ROOT (the storage the studio and the Ray nodes share at the same
path), readable by the account trainers run as alone, and the job carries only the
file's path (RLSTUDIO_BOOTSTRAP_FILE). The trainer reads the file, deletes it and redeems
the secret (trainer.reporting.bootstrap).

The folders under the root belong to the trainer account, which every trainer runs as,
so one could have planted a symlink in them: each folder is opened relative to its
parent without following symlinks, and the file is created exclusively, without
following one, under a fresh name in that folder, then renamed over its own name. A
launch submitted again carries the same secret (an HMAC of the attempt), so writing it
again is harmless, and the rename replaces the file whole.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pwd
import secrets
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from studio.platform.trainer_account import configured_trainer_user
from trainer.reporting.bootstrap import SECRET_ENV, SECRET_FILE_ENV

logger = logging.getLogger(__name__)

Owner = tuple[int, int]  # (uid, gid)
FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class HandoffRefused(Exception):
    """The secret's file could not be written where the job will look; says why."""


def trainer_owner() -> Owner | None:
    """Who the secret file is given to: the trainer account when we are root and trainers
    run as another account; None to keep it ours (trainers run as us). An account this
    machine does not have can't be running the Ray head here, so the file stays ours (and
    root's): a trainer of any other account then can't read it and says so."""
    user = configured_trainer_user()
    if user is None:
        return None
    try:
        account = pwd.getpwnam(user)
    except KeyError:
        logger.warning("trainers run as %r, which this machine does not have", user)
        return None
    return account.pw_uid, account.pw_gid


@dataclass(frozen=True)
class SecretHandoff:
    """One job's secret and the file it goes in: `<checkpoint root>/<folders>/<name>`."""

    folders: tuple[str, ...]
    name: str
    secret: str

    @property
    def path(self) -> Path:
        return Path(settings.RLSTUDIO_CHECKPOINT_ROOT).joinpath(*self.folders, self.name)

    def job_env(self) -> dict[str, str]:
        """The job's environment entries that hand it its secret."""
        if settings.RLSTUDIO_BOOTSTRAP_VIA_ENV:  # not defended: docs/security.md
            return {SECRET_ENV: self.secret}
        return {SECRET_FILE_ENV: str(self.path)}

    def deliver(self) -> None:
        """Write the secret's file (before the job is submitted)."""
        if settings.RLSTUDIO_BOOTSTRAP_VIA_ENV:
            return
        try:
            _write(Path(settings.RLSTUDIO_CHECKPOINT_ROOT), self.folders, self.name, self.secret)
        except OSError as exc:
            raise HandoffRefused(
                f"The job's secret could not be written to {self.path} ({exc}). The studio "
                "hands each job its secret in a file under RLSTUDIO_CHECKPOINT_ROOT, which "
                "it must be able to write and share with the Ray nodes at the same path "
                "(docs/security.md, RLSTUDIO_BOOTSTRAP_VIA_ENV)."
            ) from None

    def withdraw(self) -> None:
        """Remove the file of a job that will not start (Ray refused it)."""
        if settings.RLSTUDIO_BOOTSTRAP_VIA_ENV:
            return
        root = Path(settings.RLSTUDIO_CHECKPOINT_ROOT)
        with contextlib.suppress(OSError):
            fd = _open_folders(root, self.folders, trainer_owner())
            try:
                os.unlink(self.name, dir_fd=fd)
            finally:
                os.close(fd)


def _open_root(root: Path, owner: Owner | None) -> int:
    """The checkpoint root (the operator's path: symlinks in it are theirs), made when
    missing as `rlstudio up` makes it: the trainer account's."""
    if not root.is_dir():
        root.mkdir(parents=True, exist_ok=True)
        if owner is not None:
            os.chown(root, *owner)
    return os.open(root, FOLDER_FLAGS & ~os.O_NOFOLLOW)


def _open_own_folder(parent: int, name: str, owner: Owner | None) -> int:
    """`name` in `parent`, made when missing (the trainer account's, mode 700), never
    through a symlink, and refused unless it is ours or the trainer account's."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, 0o700, dir_fd=parent)
    fd = os.open(name, FOLDER_FLAGS, dir_fd=parent)
    try:
        held = os.fstat(fd)
        mine = held.st_uid == os.geteuid()
        if owner is not None and mine:
            os.fchown(fd, *owner)  # the trainer writes its checkpoints here
        elif not mine and (owner is None or held.st_uid != owner[0]):
            raise PermissionError(f"{name} belongs to uid {held.st_uid}, not to trainers")
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_folders(root: Path, folders: tuple[str, ...], owner: Owner | None) -> int:
    """A descriptor of `root/<folders>`, each folder made when missing and checked."""
    fd = _open_root(root, owner)
    try:
        for folder in folders:
            child = _open_own_folder(fd, folder, owner)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _write(root: Path, folders: tuple[str, ...], name: str, secret: str) -> None:
    owner = trainer_owner()
    fd = _open_folders(root, folders, owner)
    try:
        fresh = f".{name}.{secrets.token_hex(6)}"
        out = os.open(fresh, FILE_FLAGS, 0o600, dir_fd=fd)
        try:
            try:
                if owner is not None:
                    os.fchown(out, *owner)
                data = secret.encode()
                if os.write(out, data) != len(data):
                    raise OSError(f"{fresh}: short write")
            finally:
                os.close(out)
            os.rename(fresh, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(fresh, dir_fd=fd)
            raise
    finally:
        os.close(fd)

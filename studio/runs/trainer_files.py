"""Reading what trainers wrote without following a link they put there.

The trainer account owns the checkpoint root and everything below it (docs/security.md),
so any name there can become a symlink at any moment, also between a check and a read.
The studio reads as the account it runs as (root under `rlstudio up`), which can read
what the trainer can't (the secret key, other projects' files). So the studio reads a
run's files only through `open_trainer_folder`: the root is the operator's setting and is
opened as configured; below it every path component is opened relative to the
descriptor of the folder above it with O_NOFOLLOW (O_DIRECTORY for folders), the opened
descriptor is checked with fstat (a regular file, a folder), and bytes come from that
descriptor. A link anywhere below the root is refused, never followed, so there is no
gap between a check and the read it guards. (openat2's RESOLVE_BENEATH |
RESOLVE_NO_SYMLINKS does the same in one call, but Python has no binding for it;
component-wise opens work on every kernel.) The spool is not read here: trainers upload
its records over HTTP.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from types import TracebackType
from typing import BinaryIO

from django.conf import settings

FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a fifo put where a file was must not hang the open (fstat refuses it next).
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
# Folders nested deeper than this are not walked: a checkpoint is a few levels deep, and
# each level holds a descriptor open while its children are listed.
MAX_DEPTH = 32


class LinkRefused(OSError):
    """A name below the checkpoint root is a symlink, or a path leaves the root: the
    studio does not follow it."""


class WrongKind(OSError):
    """A name below the checkpoint root is not what was asked for (a regular file, a
    folder): a fifo, a socket, a folder where a file was."""


def _components(relative: str | PurePosixPath) -> tuple[str, ...]:
    parts = PurePosixPath(relative).parts  # "." and "//" already dropped
    if parts[:1] == ("/",) or ".." in parts:
        raise LinkRefused(errno.EXDEV, "not a path inside the folder", str(relative))
    return parts


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _open_entry(dir_fd: int, name: str, flags: int) -> int:
    """`name` in the folder `dir_fd`, never through a link, checked to be of the kind
    `flags` asks for (a folder with O_DIRECTORY, else a regular file)."""
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:
        # O_NOFOLLOW fails a link with ELOOP, or ENOTDIR with O_DIRECTORY; the lstat
        # only words the error, the open above already refused to follow.
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(dir_fd, name):
            raise LinkRefused(errno.ELOOP, "a symlink, not followed", name) from None
        raise
    mode = os.fstat(fd).st_mode
    folder = bool(flags & os.O_DIRECTORY)
    if not (stat.S_ISDIR(mode) if folder else stat.S_ISREG(mode)):
        os.close(fd)
        raise WrongKind(errno.EINVAL, "not a folder" if folder else "not a regular file", name)
    return fd


def _open_below(dir_fd: int, parts: Sequence[str], flags: int) -> int:
    """The entry `parts` below the folder `dir_fd`: every folder on the way opened
    relative to the one above it, the last entry with `flags`."""
    if not parts:
        return os.dup(dir_fd)
    current = dir_fd
    try:
        for depth, name in enumerate(parts):
            last = depth == len(parts) - 1
            opened = _open_entry(current, name, flags if last else FOLDER_FLAGS)
            if current != dir_fd:
                os.close(current)
            current = opened
    except BaseException:
        if current != dir_fd:
            os.close(current)
        raise
    return current


@dataclass(frozen=True)
class Entry:
    """One thing below a walked folder, as lstat saw it (links are never followed)."""

    relative: PurePosixPath
    info: os.stat_result
    link: str | None  # a symlink's target text, never resolved


class TrainerFolder:
    """A folder below the checkpoint root, held by its descriptor: whatever is opened
    through it stays below it, whatever is renamed or linked meanwhile."""

    def __init__(self, fd: int, path: Path) -> None:
        self.fd = fd
        self.path = path  # for messages

    def __enter__(self) -> TrainerFolder:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def folder(self, relative: str | PurePosixPath) -> TrainerFolder:
        parts = _components(relative)
        return TrainerFolder(_open_below(self.fd, parts, FOLDER_FLAGS), self.path.joinpath(*parts))

    def open_file(self, relative: str | PurePosixPath) -> BinaryIO:
        """A regular file below this folder, opened for reading."""
        parts = _components(relative)
        if not parts:
            raise WrongKind(errno.EISDIR, "not a regular file", str(self.path))
        fd = _open_below(self.fd, parts, FILE_FLAGS)
        return os.fdopen(fd, "rb")

    def names(self) -> list[str]:
        """The names in this folder, sorted."""
        return sorted(os.listdir(self.fd))

    def walk(self) -> Iterator[Entry]:
        """Everything below this folder (not itself), each folder before its contents,
        in name order. A folder that vanished or became a link since it was listed is
        yielded without contents; one deeper than MAX_DEPTH stops the walk (OSError)."""
        yield from self._walk(PurePosixPath(), 0)

    def _walk(self, prefix: PurePosixPath, depth: int) -> Iterator[Entry]:
        if depth >= MAX_DEPTH:
            raise OSError(errno.ELOOP, f"folders nested deeper than {MAX_DEPTH}", str(self.path))
        for name in self.names():
            try:
                info = os.stat(name, dir_fd=self.fd, follow_symlinks=False)
                link = os.readlink(name, dir_fd=self.fd) if stat.S_ISLNK(info.st_mode) else None
            except OSError as exc:
                if exc.errno in (errno.ENOENT, errno.EINVAL):  # gone, or no longer a link
                    continue
                raise
            yield Entry(prefix / name, info, link)
            if not stat.S_ISDIR(info.st_mode):
                continue
            try:
                child = self.folder(name)
            except (FileNotFoundError, LinkRefused, WrongKind, NotADirectoryError):
                continue  # changed since the listing: a trainer is rewriting it
            with child:
                yield from child._walk(prefix / name, depth + 1)


def parts_below(path: Path, folder: Path) -> tuple[str, ...] | None:
    """The components of `path` below `folder`, read as written (no link resolved below
    `folder`), with `folder` as given or with its own links resolved (give only a folder
    whose links are the operator's: the checkpoint root); None when `path` is not below
    it or climbs with `..`."""
    if ".." in path.parts:
        return None
    for base in (folder, folder.resolve()):
        if path.is_relative_to(base):
            return path.relative_to(base).parts
    return None


def open_trainer_folder(path: Path) -> TrainerFolder:
    """The folder `path`, which must lie under RLSTUDIO_CHECKPOINT_ROOT, opened without
    following a link below the root. LinkRefused when a link (or `..`) is on the way,
    WrongKind when it is not a folder, other OSErrors when it is missing."""
    root = Path(settings.RLSTUDIO_CHECKPOINT_ROOT)
    parts = parts_below(path, root)
    if parts is None:
        raise LinkRefused(errno.EXDEV, "not under the checkpoint root", str(path))
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        return TrainerFolder(_open_below(root_fd, parts, FOLDER_FLAGS), root.joinpath(*parts))
    finally:
        os.close(root_fd)

"""Where a run's checkpoints are, whether the studio can serve them, and serving them.

`locate_checkpoint` is the one place that decides reachability: the list shows its
answer, the download obeys it. A checkpoint's uri comes from the trainer (an ingest
token holder), so it is untrusted: the studio serves only folders inside the run's own
checkpoint folder (`RLSTUDIO_CHECKPOINT_ROOT/run-<id>`, where the launcher points the
trainer), never a path that a trainer reported elsewhere on the server's disk.

A download is a tar stream built by hand (headers, then each file's bytes in blocks), so
a multi-gigabyte checkpoint is never held in memory, and its exact length is known up
front (Content-Length lets a browser show progress).
"""

from __future__ import annotations

import os
import stat
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from studio.runs.folders import checkpoint_dir
from studio.telemetry.models import Checkpoint

# A checkpoint folder holds a few files per model part; a folder with more entries than
# this is not one, and walking it would make a list request slow.
MAX_ENTRIES = 10_000
BLOCK = tarfile.BLOCKSIZE  # 512: tar pads headers and file bodies to this
CHUNK = 1024 * 1024  # bytes read per step while streaming a file
FIX_SHARED = (
    "Set RLSTUDIO_CHECKPOINT_ROOT (now {root}) to storage this studio shares with the "
    "machines that train (the same path on both), so the studio can serve checkpoints."
)


@dataclass(frozen=True)
class CheckpointLocation:
    """A checkpoint as this studio sees it: a local folder it may serve, or why not."""

    reachable: bool
    path: Path | None = None
    reason: str = ""
    size_bytes: int | None = None


def _unreachable(reason: str) -> CheckpointLocation:
    return CheckpointLocation(reachable=False, reason=reason)


def locate_checkpoint(checkpoint: Checkpoint) -> CheckpointLocation:
    """Reachable (with the local path and its size) or the reason it is not, naming the
    uri and the setting that would fix it."""
    uri = checkpoint.uri
    root = Path(settings.RLSTUDIO_CHECKPOINT_ROOT)
    if "://" in uri:
        scheme = uri.split("://", 1)[0]
        return _unreachable(
            f"Checkpoint {uri} is in an object store ({scheme}://); this studio serves only "
            f"checkpoints on its own filesystem. Fetch it with that store's tools. "
            + FIX_SHARED.format(root=root)
        )
    path = Path(uri)
    if not path.is_absolute():  # the trainer's relative paths start at its workdir
        path = Path(settings.RLSTUDIO_TRAINER_WORKDIR) / path
    allowed = Path(checkpoint_dir(checkpoint.run_id)).resolve()
    resolved = path.resolve()
    if not resolved.is_relative_to(allowed):
        return _unreachable(
            f"Checkpoint {uri} is outside this run's checkpoint folder {allowed}; the studio "
            "serves only checkpoints written there (the launcher sets the trainer's "
            "checkpoint.dir to it). " + FIX_SHARED.format(root=root)
        )
    if not resolved.is_dir():
        return _unreachable(
            f"Checkpoint {uri} is not on this studio's filesystem (no folder at {resolved}): "
            "it was written on another machine, or pruned since (checkpoint.keep_last). "
            + FIX_SHARED.format(root=root)
        )
    size = folder_size(resolved)
    if size is None:
        return _unreachable(
            f"Checkpoint {uri} has more than {MAX_ENTRIES} entries or can't be read at "
            f"{resolved}; the studio does not serve it."
        )
    return CheckpointLocation(reachable=True, path=resolved, size_bytes=size)


def _entries(folder: Path) -> Iterator[Path]:
    """Everything under `folder` (not itself), parents first; symlinks are not followed."""
    for top, dirs, files in os.walk(folder, followlinks=False):
        dirs.sort()
        for name in sorted(dirs + files):
            yield Path(top) / name


def folder_size(folder: Path) -> int | None:
    """Bytes of the regular files under `folder`; None when unreadable or too large."""
    total = 0
    try:
        for count, entry in enumerate(_entries(folder)):
            if count >= MAX_ENTRIES:
                return None
            info = entry.lstat()
            if stat.S_ISREG(info.st_mode):
                total += info.st_size
    except OSError:
        return None
    return total


@dataclass(frozen=True)
class _Member:
    header: bytes
    source: Path | None  # a regular file's content follows its header
    size: int


def _padding(size: int) -> int:
    return -size % BLOCK


def _members(folder: Path, top: str) -> list[_Member]:
    members: list[_Member] = []
    for entry in [folder, *_entries(folder)]:
        if len(members) > MAX_ENTRIES:
            break
        info = entry.lstat()
        name = top if entry == folder else f"{top}/{entry.relative_to(folder).as_posix()}"
        tar = tarfile.TarInfo(name)
        tar.mtime = int(info.st_mtime)
        tar.mode = stat.S_IMODE(info.st_mode)
        size = 0
        if stat.S_ISDIR(info.st_mode):
            tar.type = tarfile.DIRTYPE
        elif stat.S_ISLNK(info.st_mode):  # kept as a link: its target is never read
            tar.type, tar.linkname = tarfile.SYMTYPE, os.readlink(entry)
        elif stat.S_ISREG(info.st_mode):
            size = tar.size = info.st_size
        else:
            continue  # sockets, fifos, devices: nothing a checkpoint holds
        header = tar.tobuf(format=tarfile.PAX_FORMAT, encoding="utf-8", errors="surrogateescape")
        members.append(_Member(header, entry if size else None, size))
    return members


@dataclass(frozen=True)
class TarStream:
    length: int
    chunks: Iterator[bytes]


def tar_stream(folder: Path, top: str) -> TarStream:
    """The folder as an uncompressed tar whose entries start with `top/`, produced in
    chunks. A file that changes size while streaming is cut or zero-padded to the size
    its header announced, so the length stays exact and the archive stays valid."""
    members = _members(folder, top)
    length = sum(len(m.header) + m.size + _padding(m.size) for m in members) + 2 * BLOCK

    def chunks() -> Iterator[bytes]:
        for member in members:
            yield member.header
            if member.source is None:
                continue
            left = member.size
            try:
                with member.source.open("rb") as body:
                    while left > 0:
                        data = body.read(min(CHUNK, left))
                        if not data:
                            break
                        left -= len(data)
                        yield data
            except OSError:  # pruned while streaming: the header's size is still owed
                pass
            yield b"\0" * (left + _padding(member.size))
        yield b"\0" * (2 * BLOCK)

    return TarStream(length, chunks())

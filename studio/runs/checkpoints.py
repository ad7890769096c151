"""Where a run's checkpoints are, whether the studio can serve them, and serving them.

`locate_checkpoint` is the one place that decides reachability: the list shows its
answer, the download obeys it, and `checkpoint_folder` (the folder check every other use
makes: a test-run's sampler, an evaluated checkpoint, a playground target) and
`checkpoint_export` (a checkpoint registered as a model) refuse what it refuses.

A checkpoint's uri comes from the trainer (an ingest token holder), so it is untrusted:
the studio serves only folders inside the run's own checkpoint folder
(`RLSTUDIO_CHECKPOINT_ROOT/run-<id>`, where the launcher points the trainer), never a
path that a trainer reported elsewhere on the server's disk, and never through a symlink.
The trainer can change the folder at any time, so everything in it is listed and read
through studio.runs.trainer_files, by descriptor, with no link followed.

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
from pathlib import Path, PurePosixPath

from django.conf import settings

from studio.runs.folders import checkpoint_dir
from studio.runs.models import Checkpoint
from studio.runs.trainer_files import (
    LinkRefused,
    TrainerFolder,
    open_trainer_folder,
    parts_below,
)

# A checkpoint folder holds a few files per model part; a folder with more entries than
# this is not one, and walking it would make a list request slow.
MAX_ENTRIES = 10_000
BLOCK = tarfile.BLOCKSIZE  # 512: tar pads headers and file bodies to this
CHUNK = 1024 * 1024  # bytes read per step while streaming a file
HF_EXPORT = "hf"  # the trainer's final export, inside the run's checkpoint folder
FIX_SHARED = (
    "Set RLSTUDIO_CHECKPOINT_ROOT (now {root}) to storage this studio shares with the "
    "machines that train (the same path on both), so the studio can serve checkpoints."
)


class CheckpointUnavailable(Exception):
    """The checkpoint's files are not where the studio may use them; the message says why."""


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
    allowed = Path(checkpoint_dir(checkpoint.run_id))
    outside = _unreachable(
        f"Checkpoint {uri} is outside this run's checkpoint folder {allowed} (a symlink "
        "there leads outside too: the studio follows none); the studio serves only "
        "checkpoints written there (the launcher sets the trainer's checkpoint.dir to it). "
        + FIX_SHARED.format(root=root)
    )
    # Below the root (the operator's: its own links may be resolved), inside the run's
    # folder, whose links are the trainer's and are never resolved.
    parts = parts_below(path, root)
    if parts is None or parts[:1] != (allowed.name,):
        return outside
    local = root.joinpath(*parts)
    try:
        with open_trainer_folder(local) as folder:
            size = folder_size(folder)
    except LinkRefused:
        return outside
    except OSError:
        return _unreachable(
            f"Checkpoint {uri} is not on this studio's filesystem (no folder at {local}): "
            "it was written on another machine, or pruned since (checkpoint.keep_last). "
            + FIX_SHARED.format(root=root)
        )
    if size is None:
        return _unreachable(
            f"Checkpoint {uri} has more than {MAX_ENTRIES} entries or can't be read at "
            f"{local}; the studio does not serve it."
        )
    return CheckpointLocation(reachable=True, path=local, size_bytes=size)


def checkpoint_folder(checkpoint: Checkpoint) -> Path:
    """The checkpoint's folder, if it lies inside its own run's checkpoint folder on this
    machine (the check downloads make: a trainer reports the uri, so it is untrusted);
    CheckpointUnavailable, saying why, if not."""
    location = locate_checkpoint(checkpoint)
    if not location.reachable or location.path is None:
        raise CheckpointUnavailable(location.reason)
    return location.path


# A model export holds config.json; a LoRA run's adapter export (actor.lora.export:
# adapter) holds peft's adapter_config.json instead.
EXPORT_MARKERS = ("config.json", "adapter_config.json")


def checkpoint_export(checkpoint: Checkpoint) -> Path:
    """The Hugging Face export of `checkpoint`'s run (its checkpoint folder's `hf`), if
    the checkpoint is one a download would serve and the export holds a config.json (or
    a peft adapter's adapter_config.json), reached without following a link
    (studio.runs.trainer_files)."""
    checkpoint_folder(checkpoint)
    export = Path(checkpoint_dir(checkpoint.run_id)) / HF_EXPORT
    try:
        with open_trainer_folder(export) as folder:
            names = set(folder.names())
            marker = next((m for m in EXPORT_MARKERS if m in names), EXPORT_MARKERS[0])
            folder.open_file(marker).close()
    except OSError:
        raise CheckpointUnavailable(
            f"Run {checkpoint.run_id} has no Hugging Face export in its checkpoint folder "
            "(the trainer writes one at the end of a run with checkpoint.save_hf; the "
            "studio follows no symlink there)."
        ) from None
    return export


def folder_size(folder: TrainerFolder) -> int | None:
    """Bytes of the regular files under `folder`; None when unreadable or too large."""
    total = 0
    try:
        for count, entry in enumerate(folder.walk()):
            if count >= MAX_ENTRIES:
                return None
            if stat.S_ISREG(entry.info.st_mode):
                total += entry.info.st_size
    except OSError:
        return None
    return total


@dataclass(frozen=True)
class _Member:
    header: bytes
    source: PurePosixPath | None  # a regular file (relative to the top) whose bytes follow
    size: int


def _padding(size: int) -> int:
    return -size % BLOCK


def _header(name: str, info: os.stat_result, link: str | None) -> tuple[bytes, int] | None:
    """The tar header of one entry and the size of the body that follows it; None for
    what a checkpoint never holds (sockets, fifos, devices)."""
    tar = tarfile.TarInfo(name)
    tar.mtime = int(info.st_mtime)
    tar.mode = stat.S_IMODE(info.st_mode)
    size = 0
    if stat.S_ISDIR(info.st_mode):
        tar.type = tarfile.DIRTYPE
    elif link is not None:  # kept as a link: its target is never read
        tar.type, tar.linkname = tarfile.SYMTYPE, link
    elif stat.S_ISREG(info.st_mode):
        size = tar.size = info.st_size
    else:
        return None
    return tar.tobuf(format=tarfile.PAX_FORMAT, encoding="utf-8", errors="surrogateescape"), size


def _members(folder: TrainerFolder, top: str) -> list[_Member]:
    own = _header(top, os.fstat(folder.fd), None)
    members = [_Member(own[0], None, 0)] if own else []
    for entry in folder.walk():
        if len(members) > MAX_ENTRIES:
            break
        found = _header(f"{top}/{entry.relative.as_posix()}", entry.info, entry.link)
        if found is not None:
            header, size = found
            members.append(_Member(header, entry.relative if size else None, size))
    return members


def _body(folder: TrainerFolder | None, member: _Member) -> Iterator[bytes]:
    """A member's bytes and padding: exactly the size its header announced, read from
    the file opened below `folder` now (zeros where it went, shrank, or became a link)."""
    left = member.size
    if folder is not None and member.source is not None:
        try:
            with folder.open_file(member.source) as body:
                while left > 0:
                    data = body.read(min(CHUNK, left))
                    if not data:
                        break
                    left -= len(data)
                    yield data
        except OSError:  # pruned or replaced while streaming: the header's size is owed
            pass
    yield b"\0" * (left + _padding(member.size))


@dataclass(frozen=True)
class TarStream:
    length: int
    chunks: Iterator[bytes]


def tar_stream(folder: Path, top: str) -> TarStream:
    """The folder as an uncompressed tar whose entries start with `top/`, produced in
    chunks. A file that changes size while streaming is cut or zero-padded to the size
    its header announced, so the length stays exact and the archive stays valid. The
    folder is listed now and opened again when streaming starts (by descriptor, so no
    file is opened through a link swapped in meanwhile); OSError when it can't be."""
    with open_trainer_folder(folder) as listed:
        members = _members(listed, top)
    length = sum(len(m.header) + m.size + _padding(m.size) for m in members) + 2 * BLOCK

    def chunks() -> Iterator[bytes]:
        try:
            opened: TrainerFolder | None = open_trainer_folder(folder)
        except OSError:  # pruned since the listing: every body is zeros
            opened = None
        try:
            for member in members:
                yield member.header
                if member.size:
                    yield from _body(opened, member)
            yield b"\0" * (2 * BLOCK)
        finally:
            if opened is not None:
                opened.close()

    return TarStream(length, chunks())

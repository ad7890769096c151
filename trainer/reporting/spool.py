"""The durable local spool of the studio reporter: one append-only file per (run, attempt).

Every record is one line, ``<crc32 hex> <json>\\n``, written with a single ``os.write``
on an ``O_APPEND`` descriptor, so a crash can tear at most the last line; the CRC and
the missing newline give it away and reopening truncates it (its emit never returned,
so it was never sent). Seq numbers are stored in the lines, so a later process for the
same attempt continues after the highest one found, and re-sends keep their seq.

Beside the data file:
- ``.acked`` holds ``{"acked_through": S}``: every record with seq <= S is settled
  (stored by the studio or permanently refused). Written atomically (tmp, fsync,
  rename). It outlives the data file, which is removed once fully acked at close, so
  seq numbering never restarts for an attempt.
- ``.lock`` is ``flock``ed by the process that owns the spool: two writers never mix.

Only *durable* (fsync'd) lines are handed to the uploader. Otherwise a machine crash
could lose a line the studio already stored, and the next process would reuse its seq
for a different record, which the studio's dedup would then silently drop.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

log = logging.getLogger(__name__)

FsyncPolicy = Literal["record", "group"]
SAFE_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
SEQ_PREFIX = b'{"seq":'
READ_CHUNK = 1 << 18


class SpoolError(RuntimeError):
    """The spool cannot be opened or written (busy, bad name, unwritable)."""


def encode_line(body: bytes) -> bytes:
    """Frame one JSON body (which must start with ``{"seq":N,``) as a spool line."""
    return b"%08x %s\n" % (zlib.crc32(body), body)


def decode_line(line: bytes) -> tuple[int, bytes] | None:
    """(seq, json body) of a complete line with its newline, or None if it is damaged."""
    if len(line) < 11 or not line.endswith(b"\n") or line[8:9] != b" ":
        return None
    body = line[9:-1]
    try:
        crc = int(line[:8], 16)
    except ValueError:
        return None
    if zlib.crc32(body) != crc or not body.startswith(SEQ_PREFIX):
        return None
    end = body.find(b",", len(SEQ_PREFIX))
    try:
        return int(body[len(SEQ_PREFIX) : end]), body
    except ValueError:
        return None


@dataclass(frozen=True)
class SpoolEntry:
    seq: int
    body: bytes  # the record's JSON, exactly as the studio receives it
    end: int  # file offset just after this line


@dataclass(frozen=True)
class SpoolPaths:
    data: Path
    acked: Path
    lock: Path
    rejected: Path  # records the studio refused for good, kept for inspection

    @classmethod
    def for_attempt(cls, spool_dir: str | Path, run_id: str, attempt: int) -> SpoolPaths:
        if not SAFE_NAME.match(run_id):
            raise SpoolError(
                f"run id {run_id!r} is not usable in a file name: use 1-64 characters "
                "from A-Z a-z 0-9 _ . -"
            )
        if attempt < 1:
            raise SpoolError(f"attempt must be >= 1, got {attempt}")
        stem = Path(spool_dir) / f"run-{run_id}-attempt-{attempt}"
        return cls(
            data=stem.with_suffix(".spool"),
            acked=stem.with_suffix(".acked"),
            lock=stem.with_suffix(".lock"),
            rejected=stem.with_suffix(".rejected"),
        )


def read_acked(path: Path) -> int:
    """The acked-through seq, -1 when nothing was acked (or the marker is unreadable)."""
    try:
        value = json.loads(path.read_text())["acked_through"]
    except FileNotFoundError:
        return -1
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("ignoring unreadable spool marker %s (%s); re-sending from seq 0", path, exc)
        return -1
    return int(value) if isinstance(value, int) else -1


def write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


@dataclass(frozen=True)
class Recovery:
    next_seq: int
    read_offset: int  # first byte of the first record not yet acked
    end: int  # end of the last intact line (the file is truncated here)
    damaged: int  # corrupt lines skipped in the middle of the file
    torn_bytes: int  # bytes of a torn last line, dropped


def scan(data_fd: int, acked_through: int) -> Recovery:
    """Walk the whole file once: find the highest seq, the first unacked record, and
    where the intact lines end (anything after that is a torn tail)."""
    offset = end = read_offset = holes = damaged_run = 0
    max_seq = acked_through
    pending = b""
    while chunk := os.pread(data_fd, READ_CHUNK, offset + len(pending)):
        pending += chunk
        lines = pending.split(b"\n")
        pending = lines.pop()
        for raw in lines:
            line_end = offset + len(raw) + 1
            decoded = decode_line(raw + b"\n")
            if decoded is None:
                damaged_run += 1
            else:
                holes, damaged_run = holes + damaged_run, 0
                max_seq = max(max_seq, decoded[0])
                end = line_end
                if decoded[0] <= acked_through:
                    read_offset = line_end
            offset = line_end
    return Recovery(
        next_seq=max_seq + 1,
        read_offset=read_offset,
        end=end,
        damaged=holes,
        torn_bytes=os.fstat(data_fd).st_size - end,
    )


@dataclass(frozen=True)
class Batch:
    entries: list[SpoolEntry]
    end: int  # offset after the last line read (damaged lines included)


def take_lock(path: Path) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
        os.close(fd)
        raise SpoolError(
            f"spool {path.with_suffix('.spool')} is in use by another process (pid {holder}); "
            "one process writes or sends an attempt's spool at a time"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    return fd


class Spool:
    """The spool of one (run, attempt), owned by this process until `close()`.

    `append` is called by the training thread; with fsync policy `group` a committer
    thread fsyncs behind it (emits during one fsync share the next), with `record`
    every append waits for its own fsync. One consumer reads durable lines with
    `read_batch` and settles them with `ack`.
    """

    def __init__(self, paths: SpoolPaths, fsync: FsyncPolicy = "group") -> None:
        paths.data.parent.mkdir(parents=True, exist_ok=True)
        self.paths = paths
        self.fsync_policy: FsyncPolicy = fsync
        self._lock_fd = take_lock(paths.lock)
        try:
            self._fd = os.open(paths.data, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
            self.acked_through = read_acked(paths.acked)
            found = scan(self._fd, self.acked_through)
            if found.torn_bytes:
                log.warning(
                    "spool %s: cut %d bytes of a torn last line (a crash mid-write)",
                    paths.data,
                    found.torn_bytes,
                )
                os.ftruncate(self._fd, found.end)
                os.fsync(self._fd)
            if found.damaged:
                log.warning("spool %s: skipping %d damaged lines", paths.data, found.damaged)
        except BaseException:
            os.close(self._lock_fd)
            raise
        self.next_seq = found.next_seq
        self.read_offset = found.read_offset
        self.appended = 0  # records appended by this process
        self._written = found.end
        self._durable = found.end
        self._dirty = False
        self._closing = False
        self._cond = threading.Condition()
        self._committer: threading.Thread | None = None
        if fsync == "group":
            self._committer = threading.Thread(
                target=self._commit_loop, name="spool-fsync", daemon=True
            )
            self._committer.start()

    # -- writer side ------------------------------------------------------------------

    def append(self, record: bytes) -> int:
        """Append one record (a JSON object without "seq"); returns its seq.

        Raises OSError (disk full, ...) after cutting off any partial line, so the seq
        is not used and the file stays well-formed."""
        if not record.startswith(b"{") or record == b"{}":
            raise ValueError("a spool record is a non-empty JSON object")
        with self._cond:
            if self._closing:
                raise SpoolError(f"spool {self.paths.data} is closed")
            seq = self.next_seq
            line = encode_line(b'{"seq":%d,%s' % (seq, record[1:]))
            try:
                view = memoryview(line)
                while view:
                    view = view[os.write(self._fd, view) :]
            except OSError:
                os.ftruncate(self._fd, self._written)
                raise
            self._written += len(line)
            self.next_seq += 1
            self.appended += 1
            if self.fsync_policy == "record":
                os.fsync(self._fd)
                self._durable = self._written
            else:
                self._dirty = True
            self._cond.notify_all()
            return seq

    def _commit_loop(self) -> None:
        while True:
            with self._cond:
                while not self._dirty and not self._closing:
                    self._cond.wait()
                if not self._dirty:
                    return
                self._dirty = False
                target = self._written
            try:
                os.fsync(self._fd)
            except OSError as exc:  # the data is still in the page cache; retry later
                log.error("spool %s: fsync failed: %s", self.paths.data, exc)
                with self._cond:
                    if self._closing:
                        return
                    self._dirty = True
                    self._cond.wait(1.0)
                continue
            with self._cond:
                self._durable = max(self._durable, target)
                self._cond.notify_all()

    def sync(self, timeout: float = 5.0) -> bool:
        """Make every appended line durable now (waits for the committer, at most
        `timeout` seconds: a failing disk must not hang the end of a run)."""
        with self._cond:
            target = self._written
            if self._durable >= target:
                return True
            if self._committer is None or not self._committer.is_alive():
                os.fsync(self._fd)
                self._durable = target
                self._cond.notify_all()
                return True
            return self._cond.wait_for(lambda: self._durable >= target, timeout)

    # -- reader side ------------------------------------------------------------------

    @property
    def durable(self) -> int:
        with self._cond:
            return self._durable

    def wait_for_data(
        self, offset: int, timeout: float, interrupted: Callable[[], bool] = lambda: False
    ) -> bool:
        """Wait until durable lines exist past `offset`, the spool closes, `interrupted()`
        turns true (checked on `wake()`), or `timeout` passes."""
        with self._cond:
            self._cond.wait_for(
                lambda: self._durable > offset or self._closing or interrupted(), timeout
            )
            return self._durable > offset

    def wake(self) -> None:
        """Make waiters in `wait_for_data` re-check their `interrupted` condition."""
        with self._cond:
            self._cond.notify_all()

    def read_batch(self, offset: int, max_records: int, max_bytes: int) -> Batch:
        """Durable records from `offset`: at most `max_records`, and at most `max_bytes`
        of JSON unless a single record is larger (it then travels alone)."""
        limit = self.durable
        entries: list[SpoolEntry] = []
        size = 0
        pos = offset
        pending = b""
        while pos + len(pending) < limit and len(entries) < max_records:
            chunk = os.pread(
                self._fd, min(READ_CHUNK, limit - pos - len(pending)), pos + len(pending)
            )
            if not chunk:
                break
            pending += chunk
            while len(entries) < max_records:
                cut = pending.find(b"\n")
                if cut < 0:
                    break
                raw, pending = pending[: cut + 1], pending[cut + 1 :]
                decoded = decode_line(raw)
                if decoded is None:
                    log.warning("spool %s: skipping a damaged line at %d", self.paths.data, pos)
                elif entries and size + len(decoded[1]) > max_bytes:
                    return Batch(entries, pos)
                else:
                    entries.append(SpoolEntry(seq=decoded[0], body=decoded[1], end=pos + cut + 1))
                    size += len(decoded[1])
                pos += cut + 1
            if size >= max_bytes:
                break
        return Batch(entries, pos)

    def ack(self, seq: int) -> None:
        """Every record up to `seq` is settled: never send them again."""
        if seq <= self.acked_through:
            return
        write_atomically(self.paths.acked, json.dumps({"acked_through": seq}) + "\n")
        self.acked_through = seq

    @property
    def fully_acked(self) -> bool:
        return self.acked_through >= self.next_seq - 1

    # -- shutdown ---------------------------------------------------------------------

    def close(self, remove_if_acked: bool = True) -> None:
        """Final fsync, then release the file and the lock. A fully acked data file is
        removed (the marker stays, so seq numbering of the attempt never restarts)."""
        with self._cond:
            if self._closing:
                return
        self.sync()
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        if self._committer is not None:
            self._committer.join(timeout=5.0)
        try:
            if remove_if_acked and self.fully_acked:
                self.paths.data.unlink(missing_ok=True)
            os.close(self._fd)
        finally:
            os.close(self._lock_fd)

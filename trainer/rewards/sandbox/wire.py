"""Length-prefixed JSON messages between the pool and its zygotes (over pipes)."""

from __future__ import annotations

import json
import os
import struct
from typing import Any

_HEADER = struct.Struct("<Q")
MAX_MESSAGE_BYTES = 256 * 1024 * 1024


class WireClosed(EOFError):
    """The other end closed the pipe (the process exited)."""


def _json_default(value: Any) -> Any:
    # numpy arrays and scalars (parquet rows carry them) become lists and numbers.
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


def encode(message: Any) -> bytes:
    payload = json.dumps(
        message, default=_json_default, allow_nan=False, separators=(",", ":")
    ).encode("utf-8", errors="surrogatepass")
    return _HEADER.pack(len(payload)) + payload


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def send(fd: int, message: Any) -> None:
    write_all(fd, encode(message))


def read_exact(fd: int, size: int) -> bytes:
    chunks: list[bytes] = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise WireClosed("pipe closed")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def receive(fd: int) -> Any:
    (size,) = _HEADER.unpack(read_exact(fd, _HEADER.size))
    if size > MAX_MESSAGE_BYTES:
        raise ValueError(f"message of {size} bytes exceeds {MAX_MESSAGE_BYTES}")
    return json.loads(read_exact(fd, size))

"""The warm runtime's messages: length-prefixed JSON over a Unix stream socket.

Each message is a 4-byte big-endian length and that many bytes of a JSON object whose
`kind` says what it is. A run request carries the client's stdin, stdout and stderr as
file descriptors (SCM_RIGHTS, `socket.send_fds`), attached to its first bytes.

    client -> server   ping | run (+ 3 fds) | signal
    server -> client   pong | refused | started, then exit

Stdlib only: the client imports this before anything heavy.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import struct
from dataclasses import asdict, dataclass
from typing import Any

HEADER = struct.Struct("!I")
MAX_MESSAGE_BYTES = 4 * 1024 * 1024  # a job's environment is kilobytes
STDIO_FDS = 3  # stdin, stdout, stderr


class ProtocolError(Exception):
    """The peer sent something that is not one of our messages."""


class ConnectionClosed(ProtocolError):
    """The peer closed the connection at a message boundary."""


Message = dict[str, Any]


@dataclass(frozen=True)
class RunRequest:
    """What the forked child becomes: the job's process, minus its exec."""

    argv: list[str]  # after `python -m <module>`
    module: str  # `trainer` for a studio job; a tiny module in the runtime's tests
    env: dict[str, str]  # os.environ of the job
    cwd: str
    sys_path: list[str]  # the job's sys.path (its first entry is its working directory)
    umask: int
    sigmask: list[int]  # signals blocked in the job (Ray blocks SIGINT unless it stops with it)
    ignored: list[int]  # signals the job inherited as ignored (SIG_IGN survives an exec)
    # The client's time.monotonic() when the job started (one clock for every process of
    # the machine): the child says how long the warm path took, before the job's output.
    began: float

    def message(self) -> Message:
        return {"kind": "run", **asdict(self)}

    @classmethod
    def parse(cls, message: Message) -> RunRequest:
        try:
            request = cls(
                argv=[str(a) for a in message["argv"]],
                module=str(message["module"]),
                env={str(k): str(v) for k, v in message["env"].items()},
                cwd=str(message["cwd"]),
                sys_path=[str(p) for p in message["sys_path"]],
                umask=int(message["umask"]),
                sigmask=[int(s) for s in message["sigmask"]],
                ignored=[int(s) for s in message["ignored"]],
                began=float(message["began"]),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ProtocolError(f"malformed run request: {exc!r}") from None
        return request


def send(sock: socket.socket, message: Message, fds: list[int] | None = None) -> None:
    body = json.dumps(message, separators=(",", ":")).encode()
    data = HEADER.pack(len(body)) + body
    if fds:
        sent = socket.send_fds(sock, [data], fds)
        data = data[sent:]
        if not data:
            # sendall(b"") still calls send(): if the runtime has already run the whole
            # job and closed, that raises EPIPE, and the client started the job again cold.
            return
    sock.sendall(data)


def peer_closed(sock: socket.socket) -> bool:
    """Whether the peer has hung up (what it sent before may still be readable)."""
    poller = select.poll()
    poller.register(sock, select.POLLRDHUP)
    return any(event & (select.POLLRDHUP | select.POLLHUP) for _fd, event in poller.poll(0))


def _read_exactly(sock: socket.socket, size: int, fds: list[int], max_fds: int) -> bytes:
    chunks: list[bytes] = []
    got = 0
    while got < size:
        if max_fds and not fds:  # descriptors ride on the first bytes of a message
            chunk, received, _flags, _addr = socket.recv_fds(sock, size - got, max_fds)
            fds.extend(received)
        else:
            chunk = sock.recv(size - got)
        if not chunk:
            if got == 0 and size == HEADER.size:
                raise ConnectionClosed("the peer closed the connection")
            raise ProtocolError(f"the connection closed inside a message ({got}/{size} bytes)")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def receive(sock: socket.socket, max_fds: int = 0) -> tuple[Message, list[int]]:
    """The next message and the descriptors that came with it (up to `max_fds`; the
    caller owns and must close them)."""
    fds: list[int] = []
    try:
        (size,) = HEADER.unpack(_read_exactly(sock, HEADER.size, fds, max_fds))
        if size > MAX_MESSAGE_BYTES:
            raise ProtocolError(f"a message of {size} bytes (at most {MAX_MESSAGE_BYTES})")
        body = _read_exactly(sock, size, fds, max_fds)
        try:
            message = json.loads(body)
        except ValueError as exc:
            raise ProtocolError(f"a message that is not JSON: {exc}") from None
        if not isinstance(message, dict) or not isinstance(message.get("kind"), str):
            raise ProtocolError("a message must be a JSON object with a `kind`")
    except BaseException:
        for fd in fds:
            _close_quietly(fd)
        raise
    return message, fds


def _close_quietly(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)

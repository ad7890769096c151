"""The warm runtime's message framing (trainer.warm.protocol), one function at a time."""

from __future__ import annotations

import os
import socket

import pytest

from trainer.warm import protocol


def test_a_request_sent_whole_with_its_descriptors_does_not_fail_if_the_runtime_closes_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first send carries the whole request and its descriptors. On a loaded machine
    the runtime can run the whole job and close before the client goes on: a further
    (empty) send then raised EPIPE, and the client started the job a second time, cold."""
    client, runtime = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    real_send_fds = socket.send_fds

    def send_then_runtime_closes(sock: socket.socket, buffers: list[bytes], fds: list[int]) -> int:
        sent = real_send_fds(sock, buffers, fds)
        runtime.close()
        return sent

    monkeypatch.setattr(socket, "send_fds", send_then_runtime_closes)
    read_end, write_end = os.pipe()
    try:
        protocol.send(client, {"kind": "ping"}, [read_end, write_end])
    finally:
        for fd in (read_end, write_end):
            os.close(fd)
        client.close()

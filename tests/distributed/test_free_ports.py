"""The ports a private Ray head is started on are distinct: Ray refuses one port for two
servers, and a head on ports asked for one at a time could be given one twice."""

from __future__ import annotations

import socket

from trainer.distributed.cluster import PORT_FLAGS, free_ports


def test_every_port_asked_for_at_once_is_distinct_and_bindable() -> None:
    for _ in range(200):  # asked one at a time, a repeat among 9 showed up in CI runs
        ports = free_ports(1 + len(PORT_FLAGS))
        assert len(set(ports)) == len(ports)
    for port in free_ports(3):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))

"""The ports a private Ray head is started on are distinct: Ray refuses one port for two
servers, and a head on ports asked for one at a time could be given one twice."""

from __future__ import annotations

import random
import socket
from pathlib import Path

import pytest

from trainer.distributed.cluster import EXPLICIT_PORTS_LOW, PORT_FLAGS, free_ports


def test_every_port_asked_for_at_once_is_distinct_and_bindable() -> None:
    for _ in range(200):  # asked one at a time, a repeat among 9 showed up in CI runs
        ports = free_ports(1 + len(PORT_FLAGS))
        assert len(set(ports)) == len(ports)
    for port in free_ports(3):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))


def test_ports_come_from_below_the_kernels_ephemeral_range() -> None:
    # Outgoing connections and binds to port 0 draw from the ephemeral range: a port chosen
    # there was once taken before the Ray head's server bound it.
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    ports = free_ports(50)
    assert all(EXPLICIT_PORTS_LOW <= port < low for port in ports), ports


def test_a_port_someone_holds_is_never_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    held = free_ports(1)[0]
    with socket.socket() as holder:
        holder.bind(("", held))
        holder.listen()
        offers = [held, held]  # offered first, twice; then the real choice
        choose = random.randrange
        monkeypatch.setattr(
            random, "randrange", lambda a, b: offers.pop() if offers else choose(a, b)
        )
        ports = free_ports(3)
    assert not offers and held not in ports and len(set(ports)) == 3, ports

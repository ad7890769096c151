"""The ports a private Ray head is started on are distinct: Ray refuses one port for two
servers, and a head on ports asked for one at a time could be given one twice. Nor does
another process choosing at the same moment get any of them (the machine-wide claims)."""

from __future__ import annotations

import os
import random
import socket
import time
from pathlib import Path

import pytest

from trainer.distributed import cluster
from trainer.distributed.cluster import EXPLICIT_PORTS_LOW, PORT_FLAGS, free_ports


@pytest.fixture(autouse=True)
def own_claims(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """This module's claims in a folder of its own: its hundreds of choices would otherwise
    keep those ports from the machine's other tests for CLAIM_TTL_S."""
    folder = tmp_path / "claims"
    monkeypatch.setattr(cluster, "PORT_CLAIMS", folder)
    return folder


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


def test_a_port_another_process_just_chose_is_not_chosen_again() -> None:
    # Both find the same ports free: the first has released them for its servers to bind,
    # which they had not yet done (a test stack's dashboard and a trainer's agent, in CI).
    random.seed(46)
    first = free_ports(1 + len(PORT_FLAGS))
    random.seed(46)
    second = free_ports(1 + len(PORT_FLAGS))
    assert not set(first) & set(second), (first, second)


def test_a_claim_older_than_its_time_is_taken_again(
    monkeypatch: pytest.MonkeyPatch, own_claims: Path
) -> None:
    random.seed(7)
    [port] = free_ports(1)
    claim = own_claims / str(port)
    old = time.time() - cluster.CLAIM_TTL_S - 1
    os.utime(claim, (old, old))
    random.seed(7)
    assert free_ports(1) == [port]


def test_a_claims_folder_that_is_a_link_is_not_trusted(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Another account could make the shared folder's name a link to anywhere: claims would
    # then be written, and stale ones removed, there.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o1777)
    link = tmp_path / "link"
    link.symlink_to(elsewhere)
    monkeypatch.setattr(cluster, "PORT_CLAIMS", link)
    assert len(set(free_ports(3))) == 3
    assert not list(elsewhere.iterdir())

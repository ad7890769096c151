"""Is a TCP port free, and if not, which process holds it."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass

import psutil

_INTERPRETERS = ("python", "python3", "node", "java", "sh", "bash")


@dataclass(frozen=True)
class PortNeed:
    """A port `rlstudio up` is about to bind, and the flag that changes it."""

    port: int
    service: str  # "web server", "postgres", ...
    fix: str  # "pass --port", "pass --postgres-port", ...
    host: str = "127.0.0.1"


def port_free(port: int, host: str = "127.0.0.1") -> bool:
    """True if a server could bind host:port now (SO_REUSEADDR, as servers use it)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def port_owner(port: int) -> psutil.Process | None:
    """The process listening on `port`, when the OS lets us see it."""
    try:
        connections = psutil.net_connections(kind="inet")
    except psutil.Error:
        return None
    for conn in connections:
        if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port:
            if conn.pid is None:
                return None
            try:
                return psutil.Process(conn.pid)
            except psutil.Error:
                return None
    return None


def describe_process(proc: psutil.Process) -> str:
    """'pid 123 uvicorn': the pid and the program, looking past the interpreter."""
    try:
        name = proc.name()
        argv = proc.cmdline()
    except psutil.Error:
        return f"pid {proc.pid}"
    program = name
    if name.startswith(_INTERPRETERS) and len(argv) > 1:
        rest = argv[1:]
        if rest[0] == "-m" and len(rest) > 1:
            program = rest[1]
        elif not rest[0].startswith("-"):
            program = os.path.basename(rest[0])
    return f"pid {proc.pid} {program}"


def busy_port_message(need: PortNeed) -> str | None:
    """None if free, else the one line that says who holds it and what to do."""
    if port_free(need.port, need.host):
        return None
    owner = port_owner(need.port)
    holder = f" (by {describe_process(owner)})" if owner is not None else ""
    return f"port {need.port} for the {need.service} is in use{holder}; stop it or {need.fix}"


def free_port(host: str = "127.0.0.1") -> int:
    """A port the OS considers free right now (for tests and ad-hoc use)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])

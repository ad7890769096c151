"""Make sure the test suite has a real Postgres and Redis, and say where they are.

Prints `export NAME=value` lines for the shell
(`eval "$(python -m studio.platform.suite_services)"`).
Order of preference: DATABASE_URL / REDIS_URL already set; the machine's local
services on their standard ports (started with the distribution's tools if
they are installed but stopped).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import time

LOCAL_POSTGRES = "postgresql://postgres@127.0.0.1:5432/postgres"
LOCAL_REDIS = "redis://127.0.0.1:6379/15"


def port_open(port: int, host: str = "127.0.0.1", timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def _wait_for(port: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if port_open(port):
            return True
        time.sleep(0.2)
    return False


def _start_system_postgres() -> bool:
    if not shutil.which("pg_ctlcluster"):
        return False
    for version_dir in sorted(glob.glob("/etc/postgresql/*")):
        version = os.path.basename(version_dir)
        subprocess.run(
            ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "start"],
            check=False,
            capture_output=True,
        )
    return _wait_for(5432, 20)


def _start_system_redis() -> bool:
    if not shutil.which("redis-server"):
        return False
    subprocess.run(
        [
            "redis-server",
            "--daemonize",
            "yes",
            "--bind",
            "127.0.0.1",
            "--port",
            "6379",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        check=False,
        capture_output=True,
    )
    return _wait_for(6379, 10)


def ensure() -> dict[str, str]:
    env: dict[str, str] = {}
    if not os.environ.get("DATABASE_URL"):
        if not port_open(5432) and not _start_system_postgres():
            sys.exit(
                "make test: no Postgres on 127.0.0.1:5432 and none could be started; "
                "set DATABASE_URL to a Postgres the tests may use."
            )
        env["DATABASE_URL"] = LOCAL_POSTGRES
    if not os.environ.get("REDIS_URL"):
        if not port_open(6379) and not _start_system_redis():
            sys.exit(
                "make test: no Redis on 127.0.0.1:6379 and none could be started; "
                "set REDIS_URL to a Redis the tests may use."
            )
        env["REDIS_URL"] = LOCAL_REDIS
    return env


if __name__ == "__main__":
    for name, value in ensure().items():
        print(f"export {name}={value}")

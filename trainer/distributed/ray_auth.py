"""Ray's token authentication, wherever a Ray head is started or reached: the trainer's
private head, `rlstudio up`'s embedded one, the test suite's.

Ray (2.52+) refuses every RPC and HTTP request without the cluster's token when
RAY_AUTH_MODE=token. A head started here gets a fresh token (nothing of a head outlives
it), in a file only the head's account (and root) can read; holding it means being able to
run code as that account. An external cluster (RAY_ADDRESS) is reached with the token its
operator gives, in RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH (docs/deploy.md). Ray's own clients
(the Jobs SDK, ray.init) read those variables; plain HTTP probes add the header themselves.

Light on purpose (no ray import): the studio uses it too.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path

TOKEN_MODE = "token"
# Ray resolves a head started on 127.0.0.1 to the host's external address (so that other
# machines can join) unless it is told this is a single-machine cluster: then every
# server binds loopback, and no port of the head is on the network.
SINGLE_MACHINE_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


def write_token(path: Path, owner: tuple[int, int] | None = None) -> Path:
    """A new token at `path` (mode 600; chowned to `owner` before it holds anything)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    scratch = path.with_name(f".{path.name}.new")
    scratch.unlink(missing_ok=True)
    fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    if owner is not None:
        os.fchown(fd, *owner)
    with os.fdopen(fd, "w") as handle:
        handle.write(secrets.token_hex(32))
    scratch.replace(path)
    return path


def client_env(token_path: Path) -> dict[str, str]:
    """What a process needs in its environment to reach a head holding this token."""
    return {"RAY_AUTH_MODE": TOKEN_MODE, "RAY_AUTH_TOKEN_PATH": str(token_path)}


def token_from_env(env: Mapping[str, str] | None = None) -> str | None:
    """The token Ray's clients would send, read the way Ray reads it; None without one."""
    env = os.environ if env is None else env
    if env.get("RAY_AUTH_MODE", "") != TOKEN_MODE:
        return None
    if env.get("RAY_AUTH_TOKEN"):
        return env["RAY_AUTH_TOKEN"].strip()
    path = env.get("RAY_AUTH_TOKEN_PATH") or str(Path.home() / ".ray" / "auth_token")
    try:
        return Path(path).read_text().strip() or None
    except OSError:
        return None


def auth_headers(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The Authorization header for Ray's HTTP APIs (dashboard, Jobs), when a token is set."""
    token = token_from_env(env)
    return {"Authorization": f"Bearer {token}"} if token else {}

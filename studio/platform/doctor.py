"""`rlstudio doctor`: can this machine run the studio? One line per check, each naming its fix."""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import psycopg
import redis
import requests

from studio.paths import REPO_ROOT, var_dir
from studio.platform import embedded_postgres as pg
from studio.platform import services as svc
from studio.platform.ports import PortNeed, busy_port_message
from studio.platform.supervisor import UpError
from trainer.distributed import ray_auth

Level = Literal["ok", "warn", "FAIL"]
MIN_FREE_GB = 1.0
WARN_FREE_GB = 5.0


@dataclass(frozen=True)
class Check:
    level: Level
    name: str
    detail: str


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=8000, help="web port `up` would use (8000)")


def _version_of(argv: list[str], timeout: float = 60) -> str | None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip().splitlines()[-1] if out.stdout.strip() else None


def check_python() -> Check:
    version = platform.python_version()
    if sys.version_info[:2] not in ((3, 11), (3, 12)):
        return Check("FAIL", "python", f"{version}; RL Studio needs 3.11 or 3.12 (make install)")
    return Check("ok", "python", f"{version} ({sys.executable})")


def check_torch() -> Check:
    # In a subprocess: the studio must not import torch, and torch takes seconds to load.
    code = "import torch; print(torch.__version__, torch.cuda.is_available())"
    out = _version_of([sys.executable, "-c", code])
    if out is None:
        return Check("FAIL", "torch", "not importable; run `make install` (CPU torch first)")
    version, cuda = out.split()
    return Check("ok", "torch", f"{version} ({'CUDA' if cuda == 'True' else 'CPU only'})")


def check_node() -> list[Check]:
    built = (REPO_ROOT / "frontend" / "dist" / "index.html").exists()
    checks = []
    for tool in ("node", "npm"):
        out = _version_of([tool, "--version"]) if shutil.which(tool) else None
        if out is not None:
            checks.append(Check("ok", tool, out))
        else:
            level: Level = "warn" if built else "FAIL"
            why = "frontend already built" if built else "needed to build the frontend"
            checks.append(Check(level, tool, f"missing ({why}); install Node.js 20+ and npm"))
    return checks


def check_ports(web_port: int) -> list[Check]:
    from studio import settings  # RLSTUDIO_* port defaults and overrides

    needs = [PortNeed(web_port, "web server", "pass --port to `up`")]
    if not os.environ.get("DATABASE_URL"):
        port = settings.EMBEDDED_POSTGRES_PORT
        needs.append(PortNeed(port, "embedded Postgres", "set RLSTUDIO_POSTGRES_PORT"))
    if not os.environ.get("REDIS_URL"):
        needs.append(
            PortNeed(settings.EMBEDDED_REDIS_PORT, "embedded Redis", "set RLSTUDIO_REDIS_PORT")
        )
    if not os.environ.get("RAY_ADDRESS"):
        port = settings.EMBEDDED_RAY_DASHBOARD_PORT
        needs.append(PortNeed(port, "Ray dashboard", "set RLSTUDIO_RAY_DASHBOARD_PORT"))
        needs += [
            PortNeed(settings.EMBEDDED_RAY_PORT + i, "Ray head", "set RLSTUDIO_RAY_PORT")
            for i in range(len(svc.RAY_EXTRA_PORT_FLAGS) + 1)
        ]
    # A busy port is a warning: it is often a studio that is already up.
    busy = [m for m in (busy_port_message(n) for n in needs) if m]
    if busy:
        return [Check("warn", "ports", m) for m in busy]
    return [Check("ok", "ports", "free: " + ", ".join(str(n.port) for n in needs))]


def _embedded(name: str, find: Callable[[], object], what: str) -> Check:
    try:
        find()
    except UpError as exc:
        return Check("FAIL", name, str(exc))
    return Check("ok", name, f"not set: `rlstudio up` starts {what}")


def check_database() -> Check:
    url = os.environ.get("DATABASE_URL")
    if not url:
        return _embedded("DATABASE_URL", pg.postgres_bin_dir, "an embedded Postgres")
    try:
        with psycopg.connect(url, connect_timeout=3) as conn:
            row = conn.execute("SHOW server_version").fetchone()
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return Check("FAIL", "DATABASE_URL", f"unreachable ({first}); fix it or unset it")
    return Check("ok", "DATABASE_URL", f"Postgres {row[0] if row else '?'}")


def check_redis() -> Check:
    url = os.environ.get("REDIS_URL")
    if not url:
        return _embedded("REDIS_URL", svc.redis_server_path, "an embedded Redis")
    client = redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=3)
    try:
        client.ping()
    except redis.RedisError as exc:
        return Check("FAIL", "REDIS_URL", f"unreachable ({exc}); fix it or unset it")
    finally:
        client.close()
    return Check("ok", "REDIS_URL", "answers PING")


def check_ray() -> Check:
    address = os.environ.get("RAY_ADDRESS")
    if not address:
        return _embedded("RAY_ADDRESS", svc.ray_executable, "a local Ray head")
    base = address if address.startswith("http") else f"http://{address}"
    try:
        response = requests.get(
            f"{base.rstrip('/')}/api/version", headers=ray_auth.auth_headers(), timeout=3
        )
        if response.status_code in (401, 403):
            return Check(
                "FAIL",
                "RAY_ADDRESS",
                f"{base} wants Ray's token: set RAY_AUTH_MODE=token and RAY_AUTH_TOKEN_PATH "
                "(or RAY_AUTH_TOKEN) to the cluster's (docs/deploy.md)",
            )
        response.raise_for_status()
        version = response.json().get("ray_version", "?")
    except (requests.RequestException, ValueError) as exc:
        return Check(
            "FAIL",
            "RAY_ADDRESS",
            f"no Jobs API at {base} ({type(exc).__name__}); give the dashboard URL "
            "(http://host:8265) or unset it",
        )
    return Check("ok", "RAY_ADDRESS", f"Ray {version}")


def check_disk() -> Check:
    folder = var_dir()
    probe = folder if folder.exists() else folder.parent
    free_gb = shutil.disk_usage(probe).free / 1e9
    detail = f"{free_gb:.1f} GB free in {probe}"
    if free_gb < MIN_FREE_GB:
        return Check("FAIL", "disk", f"{detail}; free space or set RLSTUDIO_VAR_DIR")
    if free_gb < WARN_FREE_GB:
        return Check("warn", "disk", f"{detail}; checkpoints need more")
    return Check("ok", "disk", detail)


def run(args: argparse.Namespace) -> int:
    checks = [check_python(), check_torch(), *check_node(), *check_ports(args.port)]
    checks += [check_database(), check_redis(), check_ray(), check_disk()]
    for check in checks:
        print(f"{check.level:<5} {check.name:<13} {check.detail}", flush=True)
    failed = [c for c in checks if c.level == "FAIL"]
    return 1 if failed else 0

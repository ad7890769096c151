"""The OS account a studio started as root runs its trainers as.

Ray starts every process of a job (the entrypoint, and the actors of a distributed run)
as the account that runs the Ray head. So a root studio starts its Ray head as an
unprivileged account of its own, `rlstudio-trainer` by default (RLSTUDIO_TRAINER_OS_USER;
`root` keeps trainers as root, explicitly), created on first use. That account owns only
what trainers write (the Ray temp dir, checkpoints, the spool, a home for caches), each
closed to other users, and reaches the reward sandbox's full isolation through user
namespaces (trainer.rewards.sandbox.zygote) rather than root.

It must differ from the account Postgres runs as: a trainer must never read the
database's files.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from pathlib import Path

from studio.platform.supervisor import UpError

DEFAULT_TRAINER_OS_USER = "rlstudio-trainer"
KEEP_ROOT = "root"
NO_LOGIN = ("--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin")


def configured_trainer_user() -> str | None:
    """The account trainers run as by this process's settings; None when they run as
    ourselves (not root, or root kept explicitly). The Ray head `rlstudio up` starts and
    the launcher handing each job its secret (studio.runs.handoff) both ask here, with
    the environment `rlstudio up` gives every process it starts. Creates nothing."""
    if os.geteuid() != 0:
        return None
    wanted = os.environ.get("RLSTUDIO_TRAINER_OS_USER", DEFAULT_TRAINER_OS_USER)
    return None if wanted == KEEP_ROOT else wanted


def trainer_os_user(postgres_user: str | None = None) -> str | None:
    """The account trainers run as (configured_trainer_user), checked against Postgres's
    and created when it is missing."""
    wanted = configured_trainer_user()
    if wanted is None:
        return None
    if postgres_user is not None and wanted == postgres_user:
        raise UpError(
            f"trainers and Postgres would both run as {wanted!r}, so a trainer could read the "
            "database's files; set RLSTUDIO_TRAINER_OS_USER to another account"
        )
    try:
        pwd.getpwnam(wanted)
    except KeyError:
        _create_account(wanted)
    return wanted


def _create_account(name: str) -> None:
    useradd = shutil.which("useradd")
    fix = f"create it (useradd --system {name}) or set RLSTUDIO_TRAINER_OS_USER"
    if useradd is None:
        raise UpError(f"trainers run as {name!r}, which does not exist (no useradd); {fix}")
    done = subprocess.run(
        [useradd, "--system", "--user-group", "--no-create-home", *NO_LOGIN, name],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise UpError(f"creating the account {name!r} failed ({done.stderr.strip()}); {fix}")


def own_folders(user: str, folders: list[Path]) -> None:
    """Make `folders` the account's (everything inside them too: a checkpoint a root
    trainer wrote earlier must stay resumable) and closed to other users."""
    account = pwd.getpwnam(user)
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o700)
        for path in [folder, *folder.rglob("*")]:
            if path.is_symlink():
                continue
            st = path.lstat()
            if (st.st_uid, st.st_gid) != (account.pw_uid, account.pw_gid):
                os.chown(path, account.pw_uid, account.pw_gid, follow_symlinks=False)


def share_read_only(folders: list[Path]) -> None:
    """Let every account read `folders` (the demo models and data trainers load): some
    writers (safetensors) create files as 600 whatever the umask."""
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in [folder, *folder.rglob("*")]:
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | (0o555 if path.is_dir() else 0o444))


def close_to_others(folders: list[Path]) -> None:
    """The studio's own folders that trainers have no business reading (logs, Redis's
    dump, uploads): its account's alone."""
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o700)


def check_trainer_runs(user: str, python: str, workdir: Path) -> None:
    """Start the trainer's interpreter as `user` in its working directory, so a python
    or checkout it cannot reach (a pyenv build under a private /root) fails here, with
    the fix, rather than as every run failing to start."""
    account = pwd.getpwnam(user)
    try:
        done = subprocess.run(
            [python, "-c", "import trainer.commands.cli"],
            cwd=workdir,
            user=account.pw_uid,
            group=account.pw_gid,
            extra_groups=[],
            env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        failure = str(exc)
    else:
        failure = done.stderr.strip().splitlines()[-1] if done.returncode else ""
    if failure:
        raise UpError(
            f"trainers run as {user!r}, who cannot start {python} in {workdir} ({failure}); "
            "make the virtualenv from a python every user can run (rm -rf .venv && make "
            "install uses /usr/bin/python3.11 where there is one) and let the account enter "
            f"{workdir}, or set RLSTUDIO_TRAINER_OS_USER={KEEP_ROOT} to keep trainers as root"
        )

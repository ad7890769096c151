"""Secrets the embedded stack generates for itself, kept in files only its account reads.

Every service under the studio needs a secret, and nobody types them: the first `rlstudio
up` generates each into `var/secrets/` (the folder mode 700, each file mode 600, created
exclusively so a file planted there by someone else is refused, not used). Later starts
read them back; `rlstudio rotate-secrets` replaces them while the studio is stopped.

Django-free: settings read these before Django is configured.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

POSTGRES_PASSWORD = "postgres-password"
REDIS_PASSWORD = "redis-password"
ROTATED = (POSTGRES_PASSWORD, REDIS_PASSWORD)
# The embedded Postgres's database, and the role that owns it (not a superuser).
EMBEDDED_DB_NAME = "rlstudio"
EMBEDDED_DB_ROLE = "rlstudio"


class SecretFileError(RuntimeError):
    """A secret's file or folder is not private to this account: it must not be used."""


def secrets_dir(var: Path) -> Path:
    """`var/secrets`, created private; refused if it is a link or others can enter it."""
    folder = var / "secrets"
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700, parents=True)
    _check_private(folder, want_dir=True)
    return folder


def _check_private(path: Path, *, want_dir: bool) -> None:
    st = path.lstat()
    kind_ok = stat.S_ISDIR(st.st_mode) if want_dir else stat.S_ISREG(st.st_mode)
    if not kind_ok or st.st_uid != os.geteuid() or stat.S_IMODE(st.st_mode) & 0o077:
        raise SecretFileError(
            f"{path} must be a {'folder' if want_dir else 'file'} of this account's with no "
            f"access for others (found mode {stat.S_IMODE(st.st_mode):o}, owner uid "
            f"{st.st_uid}); remove it and start again"
        )


def read_or_create(var: Path, name: str) -> str:
    """The secret `name`, generated on first use."""
    path = secrets_dir(var) / name
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        _check_private(path, want_dir=False)
        value = path.read_text().strip()
        if value:
            return value
        return write(var, name)  # an interrupted first write left it empty
    with os.fdopen(fd, "w") as handle:
        value = new_secret()
        handle.write(value)
    return value


def write(var: Path, name: str) -> str:
    """Replace the secret `name` with a new one (atomically: a crash keeps the old one)."""
    value = new_secret()
    _replace_private(secrets_dir(var) / name, value)
    return value


def _replace_private(path: Path, value: str) -> None:
    """Write `path` (mode 600) through a fresh scratch file renamed over it, never
    following a link planted at either name."""
    scratch = path.with_name(f".{path.name}.new")
    scratch.unlink(missing_ok=True)
    fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(value)
    scratch.replace(path)


def new_secret() -> str:
    # URL-safe, so it goes into connection URLs and config files unquoted.
    return secrets.token_urlsafe(32)


def embedded_database_url(var: Path, port: int) -> str:
    """The studio's connection to the embedded Postgres: its own role, with its password."""
    password = read_or_create(var, POSTGRES_PASSWORD)
    return f"postgresql://{EMBEDDED_DB_ROLE}:{password}@127.0.0.1:{port}/{EMBEDDED_DB_NAME}"


def embedded_redis_url(var: Path, port: int) -> str:
    password = read_or_create(var, REDIS_PASSWORD)
    return f"redis://:{password}@127.0.0.1:{port}/0"


def read_or_create_secret_key(var: Path) -> str:
    """Django's key for a development studio, generated once (var/secret_key, mode 600)."""
    path = var / "secret_key"
    if not path.exists():
        return replace_secret_key(var)
    return path.read_text().strip()


def replace_secret_key(var: Path) -> str:
    var.mkdir(parents=True, exist_ok=True)
    value = secrets.token_urlsafe(50)
    _replace_private(var / "secret_key", value)
    return value

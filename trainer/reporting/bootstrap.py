"""A studio-launched trainer's start: its one-time secret exchanged for its run.

The job's environment holds only the studio's URL, the run id and attempt and the path
of a file holding a secret that works once (RLSTUDIO_BOOTSTRAP_FILE; see the studio's
runs/bootstrap.py and runs/handoff.py). Ray shows every job's environment to whoever
reaches its dashboard, so the secret itself is never there: the launcher wrote the file
for this job's account alone, and the trainer reads it, deletes it and redeems the
secret for its ingest token (kept in this process's environment, where the reporter and
the dataset download read it), its config and its reward code (written to a file only
this user can read). Only stdlib: the trainer stays free of HTTP client dependencies.
"""

from __future__ import annotations

import json
import os
import pwd
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainer.reporting import startup

SECRET_FILE_ENV = "RLSTUDIO_BOOTSTRAP_FILE"
# The secret itself, only from a studio that shares no filesystem with its cluster
# (RLSTUDIO_BOOTSTRAP_VIA_ENV): anyone who can list Ray's jobs may redeem it first.
SECRET_ENV = "RLSTUDIO_BOOTSTRAP"
SECRET_MAX_BYTES = 256
TOKEN_ENV = "RLSTUDIO_RUN_TOKEN"
TIMEOUT_S = 60.0


class BootstrapError(RuntimeError):
    """The studio did not hand this job its run; the message says why."""


@dataclass(frozen=True)
class Launch:
    config: dict[str, Any]  # the run config, reward.custom_path pointing at its code


def _post(url: str, secret: str, attempt: int) -> dict[str, Any]:
    request = urllib.request.Request(
        url,
        data=json.dumps({"attempt": attempt}).encode(),
        headers={"Authorization": f"Bootstrap {secret}", "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            body: dict[str, Any] = json.loads(response.read())
            return body
    except urllib.error.HTTPError as exc:
        detail = exc.read(2000).decode(errors="replace")
        raise BootstrapError(f"{url}: HTTP {exc.code}: {detail}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise BootstrapError(f"{url}: {exc}") from None


def _write_private(code: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="rlstudio-reward-"))  # mode 0700
    path = folder / "reward.py"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(code)
    return path


def account_line() -> str:
    """Which account this trainer runs as: a root studio starts trainers unprivileged."""
    uid = os.geteuid()
    try:
        name = pwd.getpwuid(uid).pw_name
    except KeyError:
        name = "(no name)"
    return f"trainer process: user {name} (uid {uid})"


def _read_once(path: str) -> str:
    """The secret in the launcher's file, which is deleted: no later process of this
    account finds it there. A symlink is refused (the launcher writes a plain file)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            secret = os.read(fd, SECRET_MAX_BYTES).decode().strip()
        finally:
            os.close(fd)
        os.unlink(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise BootstrapError(
            f"the job's bootstrap secret file {path} can't be read and removed ({exc}); the "
            "launcher writes it for the account trainers run as (RLSTUDIO_TRAINER_OS_USER) in "
            "RLSTUDIO_CHECKPOINT_ROOT, which this machine must share with the studio at the "
            "same path (docs/security.md)"
        ) from None
    if not secret:
        raise BootstrapError(f"the job's bootstrap secret file {path} is empty")
    return secret


def take_secret(environ: Any = os.environ) -> str:
    """The job's one-time secret: from the file the launcher wrote for it
    (RLSTUDIO_BOOTSTRAP_FILE), or the environment where the studio hands it over there
    (RLSTUDIO_BOOTSTRAP). Both are removed from `environ`, so no child inherits them."""
    path = environ.pop(SECRET_FILE_ENV, "")
    inline = environ.pop(SECRET_ENV, "")
    if path:
        return _read_once(path)
    if inline:
        return str(inline)
    raise BootstrapError(f"the job needs {SECRET_FILE_ENV} (set by the studio's launcher)")


def launch_from_studio(environ: Any = os.environ) -> Launch:
    """Redeem the job's secret for its token, config and reward code."""
    secret = take_secret(environ)
    try:
        url = environ["RLSTUDIO_URL"].rstrip("/")
        run_id = int(environ["RLSTUDIO_RUN_ID"])
        attempt = int(environ["RLSTUDIO_ATTEMPT"])
    except (KeyError, ValueError) as exc:
        raise BootstrapError(
            f"--from-studio needs RLSTUDIO_URL, RLSTUDIO_RUN_ID, RLSTUDIO_ATTEMPT: {exc}"
        ) from None
    answer = _post(f"{url}/api/ingest/runs/{run_id}/bootstrap", secret, attempt)
    environ[TOKEN_ENV] = str(answer["token"])
    config: dict[str, Any] = answer["config"]
    code = answer.get("reward_code")
    if code is not None:
        config.setdefault("reward", {})["custom_path"] = str(_write_private(str(code)))
    startup.mark("bootstrap_done")
    return Launch(config)

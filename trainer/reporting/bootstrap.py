"""A studio-launched trainer's start: its one-time secret exchanged for its run.

The job's environment holds only the studio's URL, the run id and attempt and a secret
that works once (RLSTUDIO_BOOTSTRAP; see the studio's runs/bootstrap.py). The trainer
redeems it for its ingest token (kept in this process's environment, where the reporter
and the dataset download read it), its config and its reward code (written to a file
only this user can read). Only stdlib: the trainer stays free of HTTP client
dependencies.
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

SECRET_ENV = "RLSTUDIO_BOOTSTRAP"
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


def launch_from_studio(environ: Any = os.environ) -> Launch:
    """Redeem the job's secret (removed from `environ`, so no child inherits it)."""
    secret = environ.pop(SECRET_ENV, "")
    if not secret:
        raise BootstrapError(f"--from-studio needs {SECRET_ENV} (set by the studio's launcher)")
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
    return Launch(config)

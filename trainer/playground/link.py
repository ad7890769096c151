"""The model server's only connection: HTTP to the studio's URL, with a token of its own.

The job starts with the studio's URL, its server id and the path of a file holding a
one-time secret, taken as a trainer takes its own (trainer.reporting.bootstrap: the Ray
job's environment is readable by whoever reaches the dashboard); the secret is redeemed
once for the server's token, the model folder the studio resolved and the server's
settings. After that the server asks for the next chat request (a long
poll the studio answers as soon as one arrives) and posts what it generates.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import requests

from trainer.reporting.bootstrap import BootstrapError, take_secret

CONNECT_TIMEOUT_S = 10.0
REPORT_TIMEOUT_S = 30.0


class LinkError(RuntimeError):
    """The studio refused or could not be reached; the message says which."""


class Replaced(LinkError):
    """The studio no longer knows this server (released, or a newer one took its place)."""


@dataclass(frozen=True)
class ServerSettings:
    """What the studio tells the server at bootstrap (studio/playground/servers.py)."""

    model_path: str
    label: str
    idle_seconds: float
    poll_seconds: float
    chunk_interval_s: float
    threads: int

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ServerSettings:
        return cls(
            model_path=str(data["model_path"]),
            label=str(data["label"]),
            idle_seconds=float(data["idle_seconds"]),
            poll_seconds=float(data["poll_seconds"]),
            chunk_interval_s=float(data["chunk_interval_s"]),
            threads=int(data["threads"]),
        )


class StudioLink:
    def __init__(self, url: str, server_id: str) -> None:
        self.base = f"{url.rstrip('/')}/api/playground/servers/{server_id}"
        self.http = requests.Session()  # one kept-alive connection: chunks go out fast

    @classmethod
    def from_env(cls, environ: Any = os.environ) -> tuple[StudioLink, str]:
        """The link and the job's secret (its file deleted, and removed from `environ`:
        no child inherits it)."""
        try:
            url, server = environ["RLSTUDIO_URL"], environ["RLSTUDIO_PLAYGROUND_SERVER"]
        except KeyError as exc:
            raise LinkError(f"the model server needs {exc.args[0]} (set by the studio)") from None
        try:
            secret = take_secret(environ)
        except BootstrapError as exc:
            raise LinkError(f"the model server's secret: {exc}") from None
        return cls(url, server), secret

    def _call(self, method: str, path: str, timeout: float, **kwargs: Any) -> requests.Response:
        try:
            response = self.http.request(
                method, f"{self.base}/{path}", timeout=(CONNECT_TIMEOUT_S, timeout), **kwargs
            )
        except requests.RequestException as exc:
            raise LinkError(f"{path}: {exc}") from None
        if response.status_code in (401, 403, 404):
            raise Replaced(f"{path}: HTTP {response.status_code}: {response.text[:300]}")
        if response.status_code >= 400:
            raise LinkError(f"{path}: HTTP {response.status_code}: {response.text[:300]}")
        return response

    def bootstrap(self, secret: str) -> ServerSettings:
        answer = self._call("POST", "bootstrap", REPORT_TIMEOUT_S, json={"secret": secret})
        body = answer.json()
        self.http.headers["Authorization"] = f"Bearer {body['token']}"
        return ServerSettings.from_json(body)

    def next_request(self, wait_s: float) -> dict[str, Any] | None:
        """The next chat request, or None when none came within `wait_s`."""
        answer = self._call("GET", f"next?wait={wait_s:.1f}", wait_s + REPORT_TIMEOUT_S)
        if answer.status_code == 204:
            return None
        request: dict[str, Any] = answer.json()
        return request

    def report(self, event: dict[str, Any]) -> dict[str, Any]:
        answer: dict[str, Any] = self._call("POST", "report", REPORT_TIMEOUT_S, json=event).json()
        return answer

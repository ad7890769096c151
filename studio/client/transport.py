"""The client's plumbing: the HTTP session, the API's errors as exceptions, paging."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import requests

DEFAULT_URL = "http://127.0.0.1:8000"
USER_AGENT = "rlstudio-client/0.1"


class ApiError(Exception):
    """The API refused a request (4xx) or failed (5xx); carries its error body."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        fields: dict[str, Any] | None = None,
    ) -> None:
        self.status = status
        self.code = code
        self.message = message
        self.fields = fields or {}
        super().__init__(f"{status} {code}: {message}")

    @classmethod
    def from_response(cls, response: requests.Response) -> ApiError:
        try:
            body = response.json()
        except ValueError:
            body = None
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict):
            return cls(
                response.status_code,
                str(error.get("code") or "error"),
                str(error.get("message") or response.reason),
                error.get("fields") if isinstance(error.get("fields"), dict) else None,
            )
        text = response.text.strip().splitlines()[0][:200] if response.text.strip() else ""
        return cls(response.status_code, "http_error", text or response.reason or "no message")


class ServerUnreachable(Exception):
    """No answer from the server (wrong URL, server down, timeout)."""


class Transport:
    """HTTP to one studio: authentication, errors as exceptions, paged lists.
    `url` and `token` default to RLSTUDIO_URL and RLSTUDIO_TOKEN."""

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        timeout_s: float = 60.0,
        session: requests.Session | None = None,
    ) -> None:
        self.url = (url or os.environ.get("RLSTUDIO_URL") or DEFAULT_URL).rstrip("/")
        self.token = token or os.environ.get("RLSTUDIO_TOKEN") or None
        self.timeout_s = timeout_s
        self.session = session or requests.Session()
        self.session.headers["User-Agent"] = USER_AGENT
        self.session.headers["Accept"] = "application/json"
        if self.token:
            self.session.headers["Authorization"] = f"Bearer {self.token}"

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        """Send a request to `path` (under the base URL, or a full URL from a `next`
        link); raise `ApiError` for 4xx/5xx and `ServerUnreachable` for no answer."""
        url = path if path.startswith(("http://", "https://")) else self.url + path
        kwargs.setdefault("timeout", self.timeout_s)
        try:
            response = self.session.request(method, url, **kwargs)
        except requests.ConnectionError as exc:
            raise ServerUnreachable(f"can't reach {self.url}: {exc.__class__.__name__}") from exc
        except requests.Timeout as exc:
            raise ServerUnreachable(f"{self.url} did not answer in {self.timeout_s:g} s") from exc
        if response.status_code >= 400:
            raise ApiError.from_response(response)
        return response

    def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        return self.request("GET", path, params=clean_fields(params)).json()

    def post(self, path: str, body: dict[str, Any] | None = None) -> Any:
        response = self.request("POST", path, json=clean_fields(body) or {})
        return response.json() if response.content else None

    def patch(self, path: str, body: dict[str, Any]) -> Any:
        return self.request("PATCH", path, json=body).json()

    def delete(self, path: str, params: dict[str, Any] | None = None) -> None:
        self.request("DELETE", path, params=clean_fields(params))

    def paginate(self, path: str, params: dict[str, Any] | None = None) -> Iterator[Any]:
        """Every item of a paged list, following `next` links (page numbers or cursors)."""
        page = self.get(path, params)
        while True:
            yield from page["results"]
            if not page.get("next"):
                return
            page = self.get(page["next"])


def clean_fields(values: dict[str, Any] | None) -> dict[str, Any] | None:
    """Drop unset (None) fields, so the server's defaults apply."""
    if values is None:
        return None
    return {key: value for key, value in values.items() if value is not None}

"""Upload size limits, enforced before a body is buffered.

Three places, because a body can arrive three ways:
- `RequestBodyLimit` (ASGI): refuses a declared Content-Length above the limit with 413
  before reading anything, and stops a body without one (chunked) as soon as it passes
  the limit. Django's ASGI handler buffers the whole body before any view runs, so this
  is the only place that can stop it early under uvicorn.
- `check_content_length`: the same check for a view (WSGI, tests).
- `LimitedTemporaryFileUploadHandler`: streams multipart files to a temporary file and
  stops, deleting it, as soon as more than the limit has arrived.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from django.conf import settings
from django.core.files.uploadhandler import TemporaryFileUploadHandler
from django.http import HttpRequest
from rest_framework import exceptions

logger = logging.getLogger(__name__)

DEFAULT_MAX_UPLOAD_BYTES = 512 * 1024**2


def max_upload_bytes() -> int:
    return int(getattr(settings, "RLSTUDIO_MAX_UPLOAD_BYTES", DEFAULT_MAX_UPLOAD_BYTES))


def _too_large_message(limit: int, size: int | None) -> str:
    allowed = f"{limit} bytes" + (f" ({_human(limit)})" if limit >= 1024 else "")
    if size is None:
        return f"The upload is too large: it passed the limit of {allowed}."
    return f"The upload is too large: {size} bytes; the limit is {allowed}."


def _human(n: int) -> str:
    value = float(n)
    for unit in ("KiB", "MiB", "GiB"):
        value /= 1024
        if value < 1024 or unit == "GiB":
            return f"{value:.1f} {unit}".replace(".0 ", " ")
    return f"{n} bytes"


class UploadTooLarge(exceptions.APIException):
    status_code = 413
    default_code = "upload_too_large"
    default_detail = "The upload is too large."


def check_content_length(request: HttpRequest, limit: int | None = None) -> None:
    """Raise `UploadTooLarge` when the declared body size passes the limit."""
    limit = max_upload_bytes() if limit is None else limit
    raw = request.META.get("CONTENT_LENGTH") or ""
    try:
        declared = int(raw)
    except ValueError:
        return  # no (or a garbled) length: the upload handler counts bytes instead
    if declared > limit:
        raise UploadTooLarge(_too_large_message(limit, declared))


class LimitedTemporaryFileUploadHandler(TemporaryFileUploadHandler):
    """Django's temporary-file handler with a cap on the bytes received for all files."""

    def __init__(self, request: HttpRequest | None = None, limit: int | None = None) -> None:
        super().__init__(request)
        self.limit = max_upload_bytes() if limit is None else limit
        self.received = 0

    def handle_raw_input(
        self,
        input_data: Any,
        META: dict[str, Any],
        content_length: int,
        boundary: Any,
        encoding: str | None = None,
    ) -> None:
        if content_length > self.limit:
            raise UploadTooLarge(_too_large_message(self.limit, content_length))

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes | None:
        self.received += len(raw_data)
        if self.received > self.limit:
            self.discard()
            raise UploadTooLarge(_too_large_message(self.limit, None))
        return super().receive_data_chunk(raw_data, start)

    def discard(self) -> None:
        """Close (and so delete) the partial temporary file."""
        upload = getattr(self, "file", None)
        if upload is not None:
            upload.close()


Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]


class RequestBodyLimit:
    """ASGI middleware: 413 for HTTP request bodies larger than the upload limit."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = max_upload_bytes()
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length", b"")
        if declared.isdigit() and int(declared) > limit:
            await _send_413(send, _too_large_message(limit, int(declared)))
            return
        received = 0
        refused = False

        async def limited_receive() -> Message:
            nonlocal received, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    refused = True
                    await _send_413(send, _too_large_message(limit, None))
                    return {"type": "http.disconnect"}  # Django gives up on the request
            return message

        async def guarded_send(message: Message) -> None:
            if not refused:  # the 413 has been sent; nothing else may follow it
                await send(message)

        await self.app(scope, limited_receive, guarded_send)


async def _send_413(send: Send, message: str) -> None:
    body = json.dumps({"error": {"code": "upload_too_large", "message": message}}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})

"""One response's worth of a version's rows (a preview page, a diff page), in bytes.

A page is bounded in rows (100) and in bytes (`RLSTUDIO_PREVIEW_MAX_BYTES`): rows are
added while they fit, counted twice, as decoded data before a row becomes Python values
(`decoded_size`, so a row of long values costs its length, not its encoding) and as the
JSON that is sent. A page that would pass the bound is cut before the row that passes it
and says so (`truncated`, with `next_offset` where the next page starts), rather than
refused: a cut page is still a true run of consecutive rows and paging on from it
reaches every row. Only a row that alone passes the bound is refused (422, naming the
row and the setting): a page could never show it, and an empty page would read as the
end of the data.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from rest_framework import exceptions, status

from trainer.data.read_limits import human_size


class RowTooLarge(exceptions.APIException):
    status_code = status.HTTP_422_UNPROCESSABLE_ENTITY
    default_code = "row_too_large"
    default_detail = "A row is larger than one page of a dataset version may hold."


def page_max_bytes() -> int:
    return int(settings.RLSTUDIO_PREVIEW_MAX_BYTES)


def json_bytes(value: Any) -> int:
    """The size of `value` (JSON-safe) as the API sends it (compact, UTF-8)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return len(text.encode("utf-8", errors="surrogatepass"))


class PageBudget:
    """What one page holds so far, against `max_bytes` (decoded, and as JSON)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.decoded = 0
        self.sent = 0
        self.truncated = False

    def fits_decoded(self, decoded_bytes: int) -> bool:
        """Whether rows decoding to `decoded_bytes` fit; counted if they do. Asked before
        the rows become Python values."""
        if self.truncated or self.decoded + decoded_bytes > self.max_bytes:
            self.truncated = True
            return False
        self.decoded += decoded_bytes
        return True

    def fits_sent(self, value: Any) -> bool:
        """Whether `value` (JSON-safe) fits in what is sent; counted if it does."""
        size = json_bytes(value)
        if self.truncated or self.sent + size > self.max_bytes:
            self.truncated = True
            return False
        self.sent += size
        return True

    def cut(self) -> None:
        """End the page here (the caller found a row that does not fit)."""
        self.truncated = True

    def too_large(self, what: str) -> RowTooLarge:
        """The error for a first row (`what`) that alone passes the bound."""
        return RowTooLarge(
            f"{what} is larger than one page may hold ({human_size(self.max_bytes)}, "
            "RLSTUDIO_PREVIEW_MAX_BYTES); download the version to read it"
        )

    def message(self, shown: int, next_offset: int) -> str:
        if not self.truncated:
            return ""
        return (
            f"Cut after {shown} rows: the next would take this page past "
            f"{human_size(self.max_bytes)} (RLSTUDIO_PREVIEW_MAX_BYTES); the next page "
            f"starts at offset {next_offset}."
        )

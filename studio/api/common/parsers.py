"""The API's JSON parser: what the standard one lets through as a server error is a 400
(or a 413) in the API's error format instead.

- A body larger than DATA_UPLOAD_MAX_MEMORY_SIZE is a 413: DRF's parser would read a
  body of any size into memory.
- Nesting deeper than trainer.config.tree_bounds.MAX_DEPTH is a 400, checked before the
  view sees the data: deep copies, config merges and validation recurse once per level
  and would exhaust Python's recursion limit (deeper still, the decoder itself does).
- An integer of thousands of digits is a 400 (DRF's parser refuses what Python won't
  convert).
"""

from __future__ import annotations

import io
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from rest_framework import exceptions, parsers

from trainer.config.tree_bounds import MAX_DEPTH, tree_problem

TOO_DEEP = (
    f"JSON parse error - nested too deeply: at most {MAX_DEPTH} levels of objects and arrays."
)


def read_bounded(stream: Any) -> bytes:
    """The whole body, or RequestDataTooBig (413) past DATA_UPLOAD_MAX_MEMORY_SIZE."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    if limit is None:
        return bytes(stream.read())
    body = bytes(stream.read(limit + 1))
    if len(body) > limit:
        raise RequestDataTooBig("Request body exceeded settings.DATA_UPLOAD_MAX_MEMORY_SIZE.")
    return body


class JSONParser(parsers.JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        body = io.BytesIO(read_bounded(stream))
        try:
            data = super().parse(body, media_type, parser_context)
        except RecursionError:
            raise exceptions.ParseError(TOO_DEEP) from None
        if tree_problem(data, max_values=None):  # the body's size is bounded above
            raise exceptions.ParseError(TOO_DEEP)
        return data

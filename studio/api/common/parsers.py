"""The API's JSON parser: what the standard one lets through as a server error (nesting
deep enough to exhaust the decoder's recursion, an integer of thousands of digits) is a
400 in the API's error format instead."""

from __future__ import annotations

from typing import Any

from rest_framework import exceptions, parsers


class JSONParser(parsers.JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise exceptions.ParseError("JSON parse error - nested too deeply.") from None

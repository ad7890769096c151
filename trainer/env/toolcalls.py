"""Tool calls in a model's message: the Hermes / Qwen2.5 format, parsed with bounds.

A call is ``<tool_call>{"name": "calculator", "arguments": {"expression": "2+3"}}</tool_call>``;
a message may hold several. Parsing never raises for what a model wrote: each
malformed call becomes a `ToolCallError` naming what was wrong, which the environment
returns to the model as that call's observation.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from trainer.env.protocol import ToolCall

CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"
MAX_CALLS_PER_MESSAGE = 16  # the studio stores at most 16 calls per turn
MAX_ARGUMENTS_CHARS = 16 * 1024  # serialized arguments; the studio's bound too

_CALL = re.compile(re.escape(CALL_OPEN) + r"(.*?)(?:" + re.escape(CALL_CLOSE) + r"|$)", re.S)


@dataclass(frozen=True)
class ToolCallError:
    """A call that could not be parsed: `text` is what the model wrote inside the tags."""

    text: str
    reason: str


@dataclass(frozen=True)
class ParsedMessage:
    content: str  # the message without its tool-call blocks (what the model said)
    items: tuple[ToolCall | ToolCallError, ...]  # every block, in the order written

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        return tuple(i for i in self.items if isinstance(i, ToolCall))

    @property
    def errors(self) -> tuple[ToolCallError, ...]:
        return tuple(i for i in self.items if isinstance(i, ToolCallError))


def format_tool_call(call: ToolCall) -> str:
    """The text a model writes for `call` (the warm start teaches exactly this)."""
    body = json.dumps({"name": call.name, "arguments": call.arguments}, ensure_ascii=False)
    return f"{CALL_OPEN}{body}{CALL_CLOSE}"


def _parse_one(text: str, closed: bool, tool_names: frozenset[str]) -> ToolCall | ToolCallError:
    if not closed:
        return ToolCallError(text, f"the tool call is not closed with {CALL_CLOSE}")
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        return ToolCallError(text, f"the tool call is not valid JSON: {exc}")
    if not isinstance(value, dict):
        return ToolCallError(
            text, f"the tool call must be a JSON object, got {type(value).__name__}"
        )
    name, arguments = value.get("name"), value.get("arguments", {})
    if not isinstance(name, str) or not name:
        return ToolCallError(text, 'the tool call needs a "name" string')
    if name not in tool_names:
        allowed = ", ".join(sorted(tool_names)) or "none"
        return ToolCallError(text, f"unknown tool {name!r}; available tools: {allowed}")
    if not isinstance(arguments, dict):
        return ToolCallError(
            text, f'"arguments" must be a JSON object, got {type(arguments).__name__}'
        )
    if len(json.dumps(arguments)) > MAX_ARGUMENTS_CHARS:
        return ToolCallError(text[:200], f"arguments exceed {MAX_ARGUMENTS_CHARS} characters")
    return ToolCall(name=name, arguments=arguments)


def parse_tool_calls(message: str, tool_names: frozenset[str]) -> ParsedMessage:
    """Every ``<tool_call>`` block of `message`, in order (see the module docstring).

    Blocks past `MAX_CALLS_PER_MESSAGE` are reported as one error, not run."""
    items: list[ToolCall | ToolCallError] = []
    matches = list(_CALL.finditer(message))
    for index, match in enumerate(matches):
        if index == MAX_CALLS_PER_MESSAGE:
            items.append(
                ToolCallError(
                    "",
                    f"{len(matches) - index} more tool calls were ignored; at most "
                    f"{MAX_CALLS_PER_MESSAGE} per message",
                )
            )
            break
        closed = match.group(0).endswith(CALL_CLOSE)
        items.append(_parse_one(match.group(1).strip(), closed, tool_names))
    content = _CALL.sub("", message).strip()
    return ParsedMessage(content=content, items=tuple(items))

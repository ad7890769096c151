"""Tool-call parsing: well-formed, malformed, several calls in one message."""

from __future__ import annotations

from trainer.env.protocol import ToolCall
from trainer.env.toolcalls import (
    MAX_CALLS_PER_MESSAGE,
    ToolCallError,
    format_tool_call,
    parse_tool_calls,
)

TOOLS = frozenset({"calculator", "python"})


def test_a_well_formed_call_is_parsed_with_its_arguments():
    parsed = parse_tool_calls(
        'Let me compute. <tool_call>{"name": "calculator", "arguments": {"expression": "2+3"}}'
        "</tool_call>",
        TOOLS,
    )
    assert parsed.calls == (ToolCall("calculator", {"expression": "2+3"}),)
    assert parsed.errors == ()
    assert parsed.content == "Let me compute."


def test_a_message_without_calls_has_no_items():
    parsed = parse_tool_calls("The answer is 85.", TOOLS)
    assert parsed.items == ()
    assert parsed.content == "The answer is 85."


def test_several_calls_in_one_message_keep_their_order():
    message = (
        format_tool_call(ToolCall("calculator", {"expression": "1+1"}))
        + "\n"
        + format_tool_call(ToolCall("python", {"code": "print(3)"}))
        + format_tool_call(ToolCall("calculator", {"expression": "2*2"}))
    )
    parsed = parse_tool_calls(message, TOOLS)
    assert [c.name for c in parsed.calls] == ["calculator", "python", "calculator"]
    assert parsed.calls[1].arguments == {"code": "print(3)"}


def test_malformed_calls_become_errors_that_say_what_was_wrong_in_order():
    message = (
        "<tool_call>{not json}</tool_call>"
        '<tool_call>{"name": "calculator", "arguments": {"expression": "1+1"}}</tool_call>'
        '<tool_call>{"name": "shell", "arguments": {}}</tool_call>'
        '<tool_call>{"name": "calculator", "arguments": "1+1"}</tool_call>'
        '<tool_call>["calculator"]</tool_call>'
        '<tool_call>{"arguments": {}}</tool_call>'
        '<tool_call>{"name": "calculator", "arguments": {"expression": "9"}}'
    )
    items = parse_tool_calls(message, TOOLS).items
    assert isinstance(items[1], ToolCall)
    reasons = [i.reason for i in items if isinstance(i, ToolCallError)]
    assert "not valid JSON" in reasons[0]
    assert "unknown tool 'shell'" in reasons[1] and "calculator, python" in reasons[1]
    assert '"arguments" must be a JSON object, got str' in reasons[2]
    assert "must be a JSON object, got list" in reasons[3]
    assert 'needs a "name" string' in reasons[4]
    assert "not closed with </tool_call>" in reasons[5]
    assert len(items) == 7


def test_calls_past_the_per_message_bound_are_reported_not_run():
    call = format_tool_call(ToolCall("calculator", {"expression": "1"}))
    parsed = parse_tool_calls(call * (MAX_CALLS_PER_MESSAGE + 3), TOOLS)
    assert len(parsed.calls) == MAX_CALLS_PER_MESSAGE
    assert parsed.errors[0].reason.startswith("3 more tool calls were ignored")


def test_oversized_arguments_are_refused():
    big = format_tool_call(ToolCall("python", {"code": "x" * 20_000}))
    (error,) = parse_tool_calls(big, TOOLS).errors
    assert "arguments exceed" in error.reason

"""Variables a run passes to its tokenizer's chat template (verl's
`data.apply_chat_template_kwargs`).

Chat templates read extra variables: Qwen3's `enable_thinking`, gpt-oss's
`reasoning_effort`. They change every rendered prompt, so they are part of a run's
config. Values are plain scalars (a template compares or prints them), their names cannot
shadow the arguments `apply_chat_template` itself takes, and their number and size are
bounded because a config is untrusted input.
"""

from __future__ import annotations

from typing import Any

ChatTemplateValue = str | int | float | bool

# apply_chat_template's own parameters: a variable of the same name would replace them.
_RESERVED = frozenset(
    {
        "conversation",
        "messages",
        "tools",
        "documents",
        "chat_template",
        "add_generation_prompt",
        "continue_final_message",
        "tokenize",
        "padding",
        "truncation",
        "max_length",
        "return_tensors",
        "return_dict",
        "return_assistant_tokens_mask",
        "tokenizer_kwargs",
    }
)
MAX_VARIABLES = 16
MAX_TEXT_CHARS = 256


def check_template_kwargs(values: dict[str, Any]) -> None:
    """Raise ValueError (the schema's validation error) naming the first bad variable."""
    if len(values) > MAX_VARIABLES:
        raise ValueError(
            f"data.chat_template_kwargs: {len(values)} variables; at most {MAX_VARIABLES}"
        )
    for name, value in values.items():
        if not name.isidentifier():
            raise ValueError(f"data.chat_template_kwargs.{name}: not a template variable name")
        if name in _RESERVED:
            raise ValueError(
                f"data.chat_template_kwargs.{name}: an argument of apply_chat_template itself, "
                "set by RL Studio; choose the template's own variables"
            )
        if isinstance(value, str) and len(value) > MAX_TEXT_CHARS:
            raise ValueError(
                f"data.chat_template_kwargs.{name}: {len(value)} characters; at most "
                f"{MAX_TEXT_CHARS}"
            )

"""A conversation turned into the prompt a model continues.

With the tokenizer's chat template when it has one (the demo models carry ChatML), the
assistant turn opened so the reply starts right after it. A tokenizer without one (a
base model's) gets a plain transcript, `System: ...`, `User: ...`, `Assistant:`, which
base models continue sensibly; the reply is then cut at the next speaker's line
(`TRANSCRIPT_STOP`).
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

Role = Literal["system", "user", "assistant"]
SPEAKERS: dict[str, str] = {"system": "System", "user": "User", "assistant": "Assistant"}
TRANSCRIPT_STOP = ("\nUser:", "\nSystem:")


class Message(TypedDict):
    role: Role
    content: str


def conversation(system: str, messages: list[Message]) -> list[Message]:
    """The messages a model sees: the system prompt (when one is set) first."""
    head: list[Message] = [{"role": "system", "content": system}] if system.strip() else []
    return head + list(messages)


def has_template(tokenizer: Any) -> bool:
    return bool(getattr(tokenizer, "chat_template", None))


def render(tokenizer: Any, messages: list[Message]) -> str:
    """The prompt text: the chat template's rendering, else the plain transcript."""
    if has_template(tokenizer):
        text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        if not isinstance(text, str):
            raise TypeError(f"apply_chat_template returned {type(text).__name__}, expected str")
        return text
    lines = [f"{SPEAKERS[m['role']]}: {m['content']}" for m in messages]
    return "\n".join([*lines, "Assistant:"])


def encode(tokenizer: Any, messages: list[Message]) -> list[int]:
    """Token ids of the prompt; a rendered template already holds its special tokens."""
    text = render(tokenizer, messages)
    ids: list[int] = tokenizer(text, add_special_tokens=not has_template(tokenizer))["input_ids"]
    return list(ids)


def cut_at_next_speaker(text: str) -> tuple[str, bool]:
    """A transcript reply up to the next speaker's line, and whether it was cut."""
    ends = [text.index(s) for s in TRANSCRIPT_STOP if s in text]
    return (text[: min(ends)], True) if ends else (text, False)

"""Prompt encoding: records -> token ids, with over-long prompts filtered and counted."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trainer.config.schema import DataConfig
from trainer.data.formats import PromptRecord


@dataclass(frozen=True)
class EncodedPrompt:
    record: PromptRecord
    prompt_ids: list[int]
    prompt_text: str  # what was tokenised: the rendered chat template or the joined contents


def render_prompt(
    record: PromptRecord,
    tokenizer: Any,
    apply_chat_template: bool,
    tools: Sequence[dict[str, Any]] = (),
    template_kwargs: Mapping[str, Any] | None = None,
) -> str:
    """The prompt text the model sees.

    With the chat template, the assistant turn is opened (add_generation_prompt)
    so the response starts right after it, `tools` (a multi-turn environment's,
    OpenAI function entries) are rendered by the template, and `template_kwargs` are the
    template's own variables (data.chat_template_kwargs); without, message contents are
    joined by newlines.
    """
    if not apply_chat_template:
        return "\n".join(m["content"] for m in record.messages)
    if not getattr(tokenizer, "chat_template", None):
        raise ValueError(
            "the tokenizer has no chat template; set data.apply_chat_template=false "
            "or use a model folder whose tokenizer_config.json defines one"
        )
    text = tokenizer.apply_chat_template(
        record.messages,
        tools=list(tools) or None,
        add_generation_prompt=True,
        tokenize=False,
        **(template_kwargs or {}),
    )
    if not isinstance(text, str):
        raise TypeError(f"apply_chat_template returned {type(text).__name__}, expected str")
    return text


def encode_prompts(
    records: Sequence[PromptRecord],
    tokenizer: Any,
    cfg: DataConfig,
    tools: Sequence[dict[str, Any]] = (),
) -> tuple[list[EncodedPrompt], int]:
    """Tokenise every record; returns the kept prompts and how many were too long.

    Rendered chat templates already carry their special tokens, so they are
    tokenised without adding more; joined plain text gets the tokenizer's
    usual special tokens (e.g. BOS). Prompts longer than
    `cfg.max_prompt_length` tokens are dropped; the caller reports the count.
    """
    texts = [
        render_prompt(r, tokenizer, cfg.apply_chat_template, tools, cfg.chat_template_kwargs)
        for r in records
    ]
    if not texts:
        return [], 0
    ids: list[list[int]] = tokenizer(texts, add_special_tokens=not cfg.apply_chat_template)[
        "input_ids"
    ]
    kept: list[EncodedPrompt] = []
    for record, text, prompt_ids in zip(records, texts, ids, strict=True):
        if len(prompt_ids) <= cfg.max_prompt_length:
            kept.append(EncodedPrompt(record=record, prompt_ids=list(prompt_ids), prompt_text=text))
    return kept, len(records) - len(kept)

"""Rendering observations through the tokenizer's chat template.

The model's own tokens stop at its end-of-turn token; what the template puts after
that token (ChatML: a newline), the observation messages, and the opened next
assistant turn are inserted as one block of context tokens (masked out of the loss).
The block is the difference between the template rendered with and without the
observations, so any template that renders conversations append-only works
(ChatML, Qwen2.5's with ``<tool_response>``, Llama 3's ``ipython`` role, ...).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from trainer.env.protocol import Observation

# A fixed stand-in conversation: only the text after it is used.
_PROBE: list[dict[str, Any]] = [
    {"role": "user", "content": "1"},
    {"role": "assistant", "content": "2"},
]


def _render(
    tokenizer: Any,
    messages: list[dict[str, Any]],
    open_assistant: bool,
    template_kwargs: Mapping[str, Any],
) -> str:
    text = tokenizer.apply_chat_template(
        messages, add_generation_prompt=open_assistant, tokenize=False, **template_kwargs
    )
    if not isinstance(text, str):
        raise TypeError(f"apply_chat_template returned {type(text).__name__}, expected str")
    return text


def _template_message(observation: Observation) -> dict[str, Any]:
    message: dict[str, Any] = {"role": observation.role, "content": observation.content}
    if observation.role == "tool" and observation.name:
        message["name"] = observation.name
    return message


class ObservationRenderer:
    """Text of the context block inserted after an assistant message (see module doc)."""

    def __init__(self, tokenizer: Any, template_kwargs: Mapping[str, Any] | None = None) -> None:
        if not getattr(tokenizer, "chat_template", None):
            raise ValueError(
                "multi-turn rollouts need a tokenizer with a chat template (it renders tool "
                "results and user turns); this model folder's tokenizer has none"
            )
        self.tokenizer = tokenizer
        # The prompts' template variables (data.chat_template_kwargs), so the context
        # block opens the next assistant turn the way the prompt opened the first.
        self.template_kwargs = dict(template_kwargs or {})
        eos = tokenizer.eos_token
        probe = _render(tokenizer, _PROBE, False, self.template_kwargs)
        end = probe.rfind(f"2{eos}") if eos else -1
        # What the template writes after the end-of-turn token the model generated.
        self.after_eos = probe[end + 1 + len(eos) :] if end >= 0 else ""
        self.probe = probe

    def render(self, observations: Sequence[Observation]) -> str:
        messages = _PROBE + [_template_message(o) for o in observations]
        full = _render(self.tokenizer, messages, True, self.template_kwargs)
        if not full.startswith(self.probe):
            raise ValueError(
                "the chat template does not render conversations append-only (the text of "
                "earlier turns changes when a turn is added); multi-turn rollouts need one "
                "that does"
            )
        return self.after_eos + full[len(self.probe) :]


def check_template_renders_tools(tokenizer: Any, tools: Sequence[dict[str, Any]]) -> None:
    """Raise when `tools` would be silently dropped by the tokenizer's chat template."""
    template = getattr(tokenizer, "chat_template", None) or ""
    if tools and "tools" not in template:
        raise ValueError(
            "the tokenizer's chat template ignores tools=, so the model would never see the "
            "environment's tools; use a model whose template renders them (the demo tools "
            "model: `python -m trainer make-demo-model` builds var/demo-model-tools)"
        )

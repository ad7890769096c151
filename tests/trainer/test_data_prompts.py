"""Prompt encoding: chat template rendering and counting the prompts that are too long."""

from __future__ import annotations

import pytest

from trainer.config.schema import DataConfig
from trainer.data.formats import PromptRecord
from trainer.data.prompts import encode_prompts
from trainer.demo.model import build_tokenizer


@pytest.fixture(scope="module")
def tokenizer():
    return build_tokenizer()


def record(content: str, index: int = 0) -> PromptRecord:
    return PromptRecord(
        index=index,
        data_source="arith",
        messages=[{"role": "user", "content": content}],
        ground_truth="0",
        extra_info={},
    )


def test_it_renders_the_chat_template_with_the_assistant_turn_open(tokenizer) -> None:
    (encoded,), filtered = encode_prompts([record("7+5=")], tokenizer, DataConfig())

    assert filtered == 0
    assert encoded.prompt_text == "<|im_start|>user\n7+5=<|im_end|>\n<|im_start|>assistant\n"
    assert (
        encoded.prompt_ids == tokenizer(encoded.prompt_text, add_special_tokens=False)["input_ids"]
    )
    assert encoded.record.messages[0]["content"] == "7+5="


def test_it_filters_prompts_longer_than_the_limit_and_counts_them(tokenizer) -> None:
    records = [record("1+1=", 0), record("1+1=" * 30, 1), record("2+2=", 2), record("9" * 200, 3)]
    short_len = len(encode_prompts([records[0]], tokenizer, DataConfig())[0][0].prompt_ids)

    kept, filtered = encode_prompts(records, tokenizer, DataConfig(max_prompt_length=short_len))

    assert filtered == 2
    assert [e.record.index for e in kept] == [0, 2]


def test_it_joins_message_contents_without_the_chat_template(tokenizer) -> None:
    rec = PromptRecord(
        index=0,
        data_source="x",
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2="}],
        ground_truth="4",
        extra_info={},
    )

    (encoded,), _ = encode_prompts([rec], tokenizer, DataConfig(apply_chat_template=False))

    assert encoded.prompt_text == "Be brief.\n2+2="
    assert tokenizer.decode(encoded.prompt_ids) == "Be brief.\n2+2="


# A template that reads a variable the way Qwen3's reads `enable_thinking`.
THINKING_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if enable_thinking is defined and not enable_thinking %}<think></think>{% endif %}"
    "{% endif %}"
)


def test_the_chat_template_gets_the_runs_template_variables(tokenizer) -> None:
    from copy import deepcopy

    from trainer.env.chat import ObservationRenderer
    from trainer.env.protocol import Observation

    thinking = deepcopy(tokenizer)
    thinking.chat_template = THINKING_TEMPLATE
    plain = encode_prompts([record("7+5=")], thinking, DataConfig())[0][0]
    cfg = DataConfig(chat_template_kwargs={"enable_thinking": False})
    quiet = encode_prompts([record("7+5=")], thinking, cfg)[0][0]
    assert plain.prompt_text.endswith("<|im_start|>assistant\n")
    assert quiet.prompt_text.endswith("<|im_start|>assistant\n<think></think>")
    # A multi-turn context block opens the next assistant turn the same way.
    renderer = ObservationRenderer(thinking, cfg.chat_template_kwargs)
    block = renderer.render([Observation(role="tool", content="12")])
    assert block.endswith("<|im_start|>assistant\n<think></think>")


def test_verls_chat_template_arguments_are_the_runs_template_variables() -> None:
    from trainer.config import ConfigError, load_config

    cfg = load_config(overrides=["data.apply_chat_template_kwargs.reasoning_effort=medium"])
    assert cfg.data.chat_template_kwargs == {"reasoning_effort": "medium"}
    cfg = load_config(overrides=["data.apply_chat_template_kwargs={enable_thinking: false}"])
    assert cfg.data.chat_template_kwargs == {"enable_thinking": False}
    for bad, why in (
        ("{tokenize: true}", "an argument of apply_chat_template itself"),
        ("{effort: " + "y" * 300 + "}", "at most 256"),
        ("{effort: [1, 2]}", "chat_template_kwargs"),
    ):
        with pytest.raises(ConfigError, match=why):
            load_config(overrides=[f"data.chat_template_kwargs={bad}"])

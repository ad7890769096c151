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

"""The playground's generation: a reply decoded token by token as HFEngine decodes it,
a minimum length that keeps the end-of-sequence token out, and the prompt of a
conversation with and without a chat template."""

from __future__ import annotations

import itertools

import pytest
import torch

from trainer.demo.model import build_model, build_tokenizer
from trainer.playground.prompt import conversation, cut_at_next_speaker, encode, render
from trainer.rollout.engine import SamplingParams
from trainer.rollout.hf import HFEngine
from trainer.rollout.streaming import stream_completion

MESSAGES = [{"role": "user", "content": "7+5="}]


@pytest.fixture(scope="module")
def engine() -> HFEngine:
    tokenizer = build_tokenizer()
    return HFEngine(build_model(tokenizer, hidden_size=64, num_layers=2, seed=0).eval(), tokenizer)


def test_a_streamed_reply_is_the_engines_reply_token_by_token(engine: HFEngine) -> None:
    prompt = encode(engine.tokenizer, conversation("Be brief.", MESSAGES))
    for sampling in (
        SamplingParams(temperature=0.0, max_new_tokens=12),
        SamplingParams(temperature=1.0, top_p=0.9, max_new_tokens=12, seed=3),
    ):
        steps = list(stream_completion(engine, prompt, sampling))
        [whole] = engine.generate([prompt], sampling)
        assert [s.token_id for s in steps] == whole.token_ids
        assert steps[-1].text == whole.text and steps[-1].finish_reason == whole.finish_reason
        assert [s.finish_reason for s in steps[:-1]] == [None] * (len(steps) - 1)
        assert all(b.text.startswith(a.text) for a, b in itertools.pairwise(steps))


def test_a_minimum_length_keeps_the_reply_from_ending_before_it(engine: HFEngine) -> None:
    prompt = encode(engine.tokenizer, conversation("", MESSAGES))
    eos = next(iter(engine.eos_ids))
    # A model that always wants to end: the bias on the EOS logit makes it the argmax.
    bias = torch.zeros(engine.model.config.vocab_size)
    bias[eos] = 1e4
    head = engine.model.get_output_embeddings()
    hook = head.register_forward_hook(lambda module, args, out: out + bias)
    try:
        greedy = SamplingParams(temperature=0.0, max_new_tokens=30)
        assert len(list(stream_completion(engine, prompt, greedy))) == 1
        steps = list(stream_completion(engine, prompt, greedy, min_new_tokens=20))
    finally:
        hook.remove()
    assert len(steps) == 21 and steps[-1].finish_reason == "eos"
    assert eos not in [s.token_id for s in steps[:-1]]


def test_a_tokenizer_without_a_template_gets_a_plain_transcript() -> None:
    tokenizer = build_tokenizer()
    assert render(tokenizer, conversation("Be brief.", MESSAGES)).startswith(
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n7+5=<|im_end|>"
    )
    tokenizer.chat_template = None
    history = [
        *MESSAGES,
        {"role": "assistant", "content": "12"},
        {"role": "user", "content": "6+1="},
    ]
    assert render(tokenizer, conversation("Be brief.", history)) == (
        "System: Be brief.\nUser: 7+5=\nAssistant: 12\nUser: 6+1=\nAssistant:"
    )
    assert cut_at_next_speaker(" 7\nUser: and 8+8?") == (" 7", True)
    assert cut_at_next_speaker(" 7") == (" 7", False)

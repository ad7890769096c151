"""HFEngine: batched sampling with a KV cache, finish reasons and sampling-time logprobs."""

from __future__ import annotations

import pytest
import torch

from trainer.demo.model import build_model, build_tokenizer
from trainer.rollout.engine import Completion, SamplingParams
from trainer.rollout.hf import HFEngine

PROMPT_TEXTS = [
    "<|im_start|>user\n7+5=<|im_end|>\n<|im_start|>assistant\n",
    "1",
    "Using the numbers [3, 4, 5], create an equation",
    "9-3=",
]


@pytest.fixture(scope="module")
def tokenizer():
    return build_tokenizer()


@pytest.fixture(scope="module")
def model(tokenizer):
    return build_model(tokenizer, hidden_size=64, num_layers=2, seed=0).eval()


@pytest.fixture(scope="module")
def prompts(tokenizer) -> list[list[int]]:
    ids = [tokenizer(t, add_special_tokens=False)["input_ids"] for t in PROMPT_TEXTS]
    assert len({len(p) for p in ids}) == len(ids)  # different lengths: left padding matters
    return ids


def teacher_forced_logprobs(model, prompt: list[int], c: Completion, temperature: float):
    ids = torch.tensor([prompt + c.token_ids])
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0].float() / temperature
    logp = logits.log_softmax(-1)[len(prompt) - 1 : -1]
    return logp.gather(-1, torch.tensor(c.token_ids)[:, None]).squeeze(-1)


def test_it_returns_n_completions_per_prompt_prompt_major(model, tokenizer, prompts) -> None:
    engine = HFEngine(model, tokenizer, max_batch_size=5)  # 12 sequences in 3 chunks

    out = engine.generate(prompts[:4], SamplingParams(n=3, max_new_tokens=6, seed=0))

    assert [c.prompt_index for c in out] == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    for c in out:
        assert 1 <= len(c.token_ids) <= 6
        assert len(c.logprobs) == len(c.token_ids)
        assert c.finish_reason in ("eos", "length", "stop")
        assert c.text == tokenizer.decode(c.token_ids, skip_special_tokens=True)


def test_logprobs_match_a_teacher_forced_forward_pass(model, tokenizer, prompts) -> None:
    engine = HFEngine(model, tokenizer, max_batch_size=3)

    for temperature in (1.0, 0.7):
        out = engine.generate(
            prompts, SamplingParams(n=2, temperature=temperature, max_new_tokens=10, seed=1)
        )
        for c in out:
            got = torch.tensor(c.logprobs)
            assert torch.isfinite(got).all()
            assert (got <= 0).all()
            expected = teacher_forced_logprobs(model, prompts[c.prompt_index], c, temperature)
            torch.testing.assert_close(got, expected, atol=1e-4, rtol=0)


def test_rows_that_finish_early_leave_the_batch_without_disturbing_the_rest(
    model, tokenizer, prompts
) -> None:
    # Half the vocabulary ends a completion: rows finish at many different steps.
    engine = HFEngine(model, tokenizer, max_batch_size=8)
    engine.eos_ids = set(range(0, len(tokenizer), 2))

    out = engine.generate(prompts, SamplingParams(n=2, max_new_tokens=12, seed=2))

    assert len({len(c.token_ids) for c in out}) > 2
    for c in out:
        if c.finish_reason == "eos":
            assert c.token_ids[-1] in engine.eos_ids
        assert not any(t in engine.eos_ids for t in c.token_ids[:-1])
        expected = teacher_forced_logprobs(model, prompts[c.prompt_index], c, 1.0)
        torch.testing.assert_close(torch.tensor(c.logprobs), expected, atol=1e-4, rtol=0)


def test_greedy_is_deterministic_and_reports_logprobs_at_temperature_one(
    model, tokenizer, prompts
) -> None:
    engine = HFEngine(model, tokenizer)
    greedy = SamplingParams(n=2, temperature=0.0, max_new_tokens=8)

    first, second = engine.generate(prompts, greedy), engine.generate(prompts, greedy)

    assert [c.token_ids for c in first] == [c.token_ids for c in second]
    assert first[0].token_ids == first[1].token_ids
    for c in first:
        expected = teacher_forced_logprobs(model, prompts[c.prompt_index], c, 1.0)
        torch.testing.assert_close(torch.tensor(c.logprobs), expected, atol=1e-4, rtol=0)
    top1 = engine.generate(prompts, SamplingParams(n=2, top_k=1, max_new_tokens=8, seed=5))
    assert [c.token_ids for c in top1] == [c.token_ids for c in first]


def test_seeded_sampling_is_reproducible(model, tokenizer, prompts) -> None:
    engine = HFEngine(model, tokenizer)

    def run(seed: int) -> list[list[int]]:
        params = SamplingParams(n=4, top_p=0.9, max_new_tokens=8, seed=seed)
        return [c.token_ids for c in engine.generate(prompts, params)]

    assert run(11) == run(11)
    assert run(11) != run(12)


def test_a_stop_string_ends_the_completion_and_is_kept(model, tokenizer, prompts) -> None:
    engine = HFEngine(model, tokenizer)
    free = engine.generate(prompts, SamplingParams(n=4, max_new_tokens=16, seed=3))
    # A character that some free-running completion produces after its first token.
    stop = next(c.text[len(c.text) // 2] for c in free if len(c.text) > 4)

    out = engine.generate(prompts, SamplingParams(n=4, max_new_tokens=16, seed=3, stop=(stop,)))

    stopped = [c for c in out if c.finish_reason == "stop"]
    assert stopped
    for c in stopped:
        assert c.text.endswith(stop)
        assert stop not in tokenizer.decode(c.token_ids[:-1], skip_special_tokens=True)
    for c in out:
        if c.finish_reason != "stop":
            assert stop not in c.text


def test_max_new_tokens_finishes_with_length(model, tokenizer, prompts) -> None:
    engine = HFEngine(model, tokenizer)
    engine.eos_ids = set()

    out = engine.generate(prompts, SamplingParams(n=2, max_new_tokens=5, seed=0))

    assert all(c.finish_reason == "length" and len(c.token_ids) == 5 for c in out)


def test_it_restores_the_training_mode_and_needs_no_grad(model, tokenizer, prompts) -> None:
    engine = HFEngine(model, tokenizer)
    model.train()
    try:
        engine.generate(prompts[:1], SamplingParams(max_new_tokens=2, seed=0))
        assert model.training
    finally:
        model.eval()


def test_update_weights_loads_new_weights_and_skips_its_own(tokenizer, prompts) -> None:
    policy = build_model(tokenizer, hidden_size=64, num_layers=2, seed=0)
    other = build_model(tokenizer, hidden_size=64, num_layers=2, seed=1)
    engine = HFEngine(policy, tokenizer)
    greedy = SamplingParams(temperature=0.0, max_new_tokens=6)
    expected = [c.token_ids for c in HFEngine(other, tokenizer).generate(prompts, greedy)]

    engine.update_weights(policy.state_dict())  # its own tensors: nothing to copy
    engine.update_weights(other.state_dict())

    assert [c.token_ids for c in engine.generate(prompts, greedy)] == expected
    assert policy.model.embed_tokens.weight.data_ptr() != other.model.embed_tokens.weight.data_ptr()


def test_it_refuses_to_generate_while_asleep(model, tokenizer, prompts) -> None:
    engine = HFEngine(model, tokenizer)
    engine.sleep()
    with pytest.raises(RuntimeError, match="call wake"):
        engine.generate(prompts, SamplingParams())
    engine.wake()
    assert len(engine.generate(prompts, SamplingParams(max_new_tokens=1))) == len(prompts)


def test_the_samples_of_a_prompt_share_one_prefill(model, tokenizer, prompts) -> None:
    engine = HFEngine(model, tokenizer, max_batch_size=64)
    prefill_rows: list[int] = []

    def record(module, args, kwargs) -> None:
        if kwargs["input_ids"].shape[1] > 1:  # decode steps feed one token per row
            prefill_rows.append(kwargs["input_ids"].shape[0])

    handle = model.register_forward_pre_hook(record, with_kwargs=True)
    try:
        repeated = [prompts[0], prompts[1], prompts[0]]
        out = engine.generate(repeated, SamplingParams(n=4, max_new_tokens=6, seed=3))
    finally:
        handle.remove()

    assert prefill_rows == [2]  # 12 rows, 2 distinct prompts: one prefill row each
    assert [c.prompt_index for c in out] == [0] * 4 + [1] * 4 + [2] * 4
    assert len({tuple(c.token_ids) for c in out}) > 3  # rows sampled apart after the copy
    for c in out:
        expected = teacher_forced_logprobs(model, repeated[c.prompt_index], c, 1.0)
        torch.testing.assert_close(torch.tensor(c.logprobs), expected, atol=1e-4, rtol=0)

"""Decoding over fixed buffers (trainer.rollout.static_decode), run here on the CPU
without graph capture: the same code the GPU replays. Greedy outputs are the eager
loop's through bucket compaction, with both mask kinds; sampled ones are seeded and
well-formed; and the step is what a CUDA graph needs: no read of the device from the
host, and the same memory at every step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

import trainer.rollout.static_decode as static_decode
from tests.trainer.host_reads import HostReads
from tests.trainer.test_device_decode import (
    MAX_NEW,
    greedy_matches_eager_on_the_demo_model,
    prompts,
    same_completions,
    tokenizer,
)
from trainer.demo.model import build_model
from trainer.rollout.engine import SamplingParams
from trainer.rollout.hf import HFEngine
from trainer.rollout.kv_cache import preallocate
from trainer.rollout.static_decode import StaticDecodeStep, bucket_size

__all__ = ["prompts", "tokenizer"]  # fixtures used here, defined with the device loop's tests


def tiny_model(tokenizer: Any, attention: str) -> torch.nn.Module:
    model = build_model(tokenizer, hidden_size=64, num_layers=2, seed=0).eval()
    model.set_attn_implementation(attention)
    return model


@pytest.fixture
def selects(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The bucket sizes the loop moved its rows into."""
    sizes: list[int] = []
    original = StaticDecodeStep.select

    def select(self: StaticDecodeStep, index: torch.Tensor, capture: bool) -> StaticDecodeStep:
        sizes.append(len(index))
        return original(self, index, capture)

    monkeypatch.setattr(StaticDecodeStep, "select", select)
    return sizes


def test_greedy_outputs_are_the_eager_loops_on_the_demo_model(demo_assets: Path) -> None:
    """On a trained model. Whether its rows also move into smaller buckets depends on
    where its answers end, which differs between CPUs (the warm start's floats): the
    compaction is asserted on the seeded random model below."""
    greedy_matches_eager_on_the_demo_model(demo_assets, "graph")


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
def test_the_step_decodes_as_the_eager_loop_whatever_attention_the_model_has(
    tokenizer: Any, prompts: list[list[int]], attention: str, selects: list[int]
) -> None:
    """The step swaps in its own attention for its forwards only: rows of several prompt
    lengths (left padding), most of which end at once while the rest run to the limit,
    decode as the eager loop through a smaller bucket, and the model keeps the attention
    it was loaded with. The model is seeded and untrained: its weights are the same on
    every CPU, unlike the warm-started demo model's."""
    model = tiny_model(tokenizer, attention)
    eager, graph = (HFEngine(model, tokenizer, decode=d) for d in ("eager", "graph"))
    for engine in (eager, graph):  # a random model: more EOS ids, so most rows end at once
        engine.eos_ids |= set(range(20, 60))
    greedy = SamplingParams(n=3, temperature=0.0, max_new_tokens=MAX_NEW)
    same_completions(eager.generate(prompts, greedy), graph.generate(prompts, greedy))
    assert selects and all(size in (1, 2, 4, 8, 16) for size in selects)
    assert model.config._attn_implementation == attention  # type: ignore[union-attr]


def test_decode_attention_is_sdpa_over_repeated_kv_heads() -> None:
    """Grouped-query attention for one query token, 14 heads over 2 KV heads (the 0.5B
    shape's), against transformers' own SDPA path, which repeats the KV heads."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    g = torch.Generator().manual_seed(0)
    query = torch.randn(5, 14, 1, 16, generator=g)
    key, value = torch.randn(2, 5, 2, 30, 16, generator=g)
    mask = torch.rand(5, 1, 1, 30, generator=g) > 0.3
    mask[:, :, :, -1] = True  # every row attends to something
    module = torch.nn.Module()
    module.num_key_value_groups = 7  # type: ignore[assignment]
    module.is_causal = True  # type: ignore[assignment]
    want, _ = sdpa_attention_forward(module, query, key, value, mask, scaling=0.25)
    got, _ = static_decode.decode_attention(module, query, key, value, mask, scaling=0.25)
    torch.testing.assert_close(got, want)


def test_sampled_outputs_are_well_formed_and_seeded(
    tokenizer: Any, prompts: list[list[int]]
) -> None:
    engine = HFEngine(tiny_model(tokenizer, "sdpa"), tokenizer, decode="graph")
    engine.eos_ids |= set(range(20, 60))
    sampling = SamplingParams(n=4, temperature=1.0, max_new_tokens=MAX_NEW, seed=7)
    first, again = engine.generate(prompts, sampling), engine.generate(prompts, sampling)
    assert [c.token_ids for c in first] == [c.token_ids for c in again]
    for completion in first:
        ended = completion.token_ids[-1] in engine.eos_ids
        assert len(completion.logprobs) == len(completion.token_ids) <= MAX_NEW
        assert not any(t in engine.eos_ids for t in completion.token_ids[:-1])
        assert completion.finish_reason == ("eos" if ended else "length")
        assert all(lp <= 0.0 for lp in completion.logprobs)
    assert len({len(c.token_ids) for c in first}) > 2


def test_bucket_sizes_are_powers_of_two_that_hold_the_rows() -> None:
    assert [bucket_size(n) for n in (1, 2, 3, 4, 5, 31, 32, 33)] == [1, 2, 4, 4, 8, 32, 32, 64]


def prefilled_step(
    model: torch.nn.Module, tokenizer: Any, prompts: list[list[int]]
) -> tuple[Any, StaticDecodeStep]:
    """The prompts prefilled, and the static step after them (not captured)."""
    prefilled = HFEngine(model, tokenizer, decode="graph")._prefill(prompts)
    step = StaticDecodeStep.from_prefill(
        model,
        prefilled.cache,
        prefilled.attention_mask,
        prefilled.next_pos,
        MAX_NEW,
        prefilled.logits.shape[-1],
        capture=False,
    )
    return prefilled, step


def test_the_step_never_reads_the_device_from_the_host(
    tokenizer: Any, prompts: list[list[int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The captured forward has no host read, where the device loop's forward (a 2D
    padding mask, which transformers checks on the host) has some: the detector sees
    them. Every layer of every step goes through the decode attention."""
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    calls: list[int] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return static_decode.decode_attention(*args, **kwargs)

    monkeypatch.setitem(
        ALL_ATTENTION_FUNCTIONS._global_mapping, static_decode.DECODE_ATTENTION, counted
    )
    model = tiny_model(tokenizer, "sdpa")
    with torch.inference_mode():
        prefilled, step = prefilled_step(model, tokenizer, prompts)
        tokens = prefilled.logits.argmax(-1)
        with HostReads() as static_reads:
            for _ in range(3):
                tokens = step(tokens).argmax(-1)
        assert static_reads.counts.total() == 0, static_reads.counts
        layers: int = model.config.num_hidden_layers  # type: ignore[union-attr, assignment]
        assert len(calls) == 3 * layers

        again = HFEngine(model, tokenizer)._prefill(prompts)
        cache = preallocate(again.cache, again.width + MAX_NEW)
        mask = torch.cat([again.attention_mask, again.attention_mask.new_ones((len(tokens), 1))], 1)
        with HostReads() as device_loop_reads:
            model(
                input_ids=tokens[:, None],
                attention_mask=mask,
                position_ids=again.next_pos[:, None],
                past_key_values=cache,
                use_cache=True,
            )
        assert device_loop_reads.counts.total() > 0


def test_every_step_reads_and_writes_the_same_memory(
    tokenizer: Any, prompts: list[list[int]]
) -> None:
    """A graph replays fixed addresses: the buffers a step reads and the logits it writes
    stay where they were, and each layer's cache hands attention the same buffers."""
    model = tiny_model(tokenizer, "sdpa")
    with torch.inference_mode():
        prefilled, step = prefilled_step(model, tokenizer, prompts)

        def addresses() -> list[int]:
            held = [step.input_ids, step.mask, step.position_ids, step.column, step.logits]
            held += [t for layer in step.cache.layers for t in (layer.keys, layer.values)]  # type: ignore[union-attr, misc]
            return [t.data_ptr() for t in held]

        before = addresses()
        tokens = prefilled.logits.argmax(-1)
        logits = [step(tokens).data_ptr() for _ in range(4)]
        assert addresses() == before and set(logits) == {step.logits.data_ptr()}
        assert int(step.column) == prefilled.width + 4


def test_decode_attention_refuses_what_it_does_not_compute() -> None:
    query, key = torch.zeros(1, 2, 1, 4), torch.zeros(1, 1, 3, 4)
    module = torch.nn.Module()
    with pytest.raises(ValueError, match="one query token"):
        static_decode.decode_attention(module, torch.zeros(1, 2, 2, 4), key, key, None)
    with pytest.raises(ValueError, match="sliding_window"):
        static_decode.decode_attention(module, query, key, key, None, sliding_window=8)

"""The vLLM rollout engine (optional extra). Needs vLLM and a CUDA GPU: skipped here.

These tests have NOT been run in this repository's development environment (CPU only,
vLLM not installable there); they are written against vLLM's documented Python API.
"""

from __future__ import annotations

import pytest
import torch

from trainer.rollout.engine import SamplingParams

pytestmark = [pytest.mark.vllm, pytest.mark.gpu]

pytest.importorskip("vllm")
if not torch.cuda.is_available():
    pytest.skip("vLLM needs a CUDA GPU", allow_module_level=True)


@pytest.fixture(scope="module")
def engine(raw_demo):
    from trainer.rollout.vllm import VLLMEngine

    return VLLMEngine(str(raw_demo / "model"), dtype="float32", gpu_memory_utilization=0.3)


@pytest.fixture(scope="module")
def weights(raw_demo):
    from trainer.models.loading import load_policy

    return {k: v.cuda() for k, v in load_policy(raw_demo / "model").state_dict().items()}


PROMPTS = [[5, 6, 7, 8], [9, 10], [11, 12, 13]]
GREEDY = SamplingParams(n=1, temperature=0.0, max_new_tokens=8)


def test_it_returns_n_completions_per_prompt_in_prompt_order(engine):
    sampling = SamplingParams(n=3, temperature=1.0, max_new_tokens=8, seed=3)
    out = engine.generate(PROMPTS, sampling)
    assert [c.prompt_index for c in out] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    for c in out:
        assert 1 <= len(c.token_ids) <= 8
        assert len(c.logprobs) == len(c.token_ids)
        assert c.finish_reason in ("eos", "stop", "length")
    again = engine.generate(PROMPTS, sampling)
    assert [c.token_ids for c in again] == [c.token_ids for c in out]  # seeded per prompt


def test_weights_loaded_in_buckets_replace_the_models(engine, weights):
    before = [c.token_ids for c in engine.generate(PROMPTS, GREEDY)]
    names = sorted(weights)
    for start in range(0, len(names), 5):  # buckets of five tensors
        engine.update_weights({n: weights[n] * 0.5 for n in names[start : start + 5]})
    changed = [c.token_ids for c in engine.generate(PROMPTS, GREEDY)]
    engine.update_weights(weights)
    restored = [c.token_ids for c in engine.generate(PROMPTS, GREEDY)]
    assert changed != before
    assert restored == before


def test_it_sleeps_between_phases_and_wakes_with_its_weights(engine, weights):
    before = [c.token_ids for c in engine.generate(PROMPTS, GREEDY)]
    free_awake = torch.cuda.mem_get_info()[0]
    engine.sleep()
    assert torch.cuda.mem_get_info()[0] > free_awake  # the KV cache and weights left the GPU
    with pytest.raises(RuntimeError, match="asleep"):
        engine.generate(PROMPTS, GREEDY)
    engine.update_weights(weights)  # a weight sync while asleep wakes the weights only
    engine.wake()
    assert [c.token_ids for c in engine.generate(PROMPTS, GREEDY)] == before

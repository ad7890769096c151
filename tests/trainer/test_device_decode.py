"""The device decode loop (trainer.rollout.device_decode), run here on the CPU: greedy
outputs are the eager loop's, sampled ones are well-formed and seeded, stop strings fall
back to the eager loop, and the host reads the batch only once per bucket of steps."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any, Literal

import pytest
import torch

import trainer.rollout.device_decode as device_decode
from trainer.demo.model import build_model, build_tokenizer
from trainer.models.loading import load_policy, load_tokenizer
from trainer.rollout.engine import Completion, SamplingParams
from trainer.rollout.hf import HFEngine

PROMPT_TEXTS = [
    "7+5=",
    "1",
    "Using the numbers [3, 4, 5], create an equation",
    "9-3=",
    "12",
    "8*7=",
    "count to ten",
    "4",
    "2+2+2=",
]
MAX_NEW = 40


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    return build_tokenizer()


@pytest.fixture(scope="module")
def model(tokenizer: Any) -> torch.nn.Module:
    return build_model(tokenizer, hidden_size=64, num_layers=2, seed=0).eval()


@pytest.fixture(scope="module")
def prompts(tokenizer: Any) -> list[list[int]]:
    return [tokenizer(t, add_special_tokens=False)["input_ids"] for t in PROMPT_TEXTS]


def engines(model: torch.nn.Module, tokenizer: Any) -> tuple[HFEngine, HFEngine]:
    eager, device = (HFEngine(model, tokenizer, decode=d) for d in ("eager", "device"))
    for engine in (eager, device):  # a random model: more EOS ids, so rows end at many steps
        engine.eos_ids |= set(range(20, 60))
    return eager, device


def test_the_cpu_decodes_eagerly_by_default(model: torch.nn.Module, tokenizer: Any) -> None:
    assert HFEngine(model, tokenizer).decode == "eager"


def same_completions(want: list[Completion], have: list[Completion]) -> None:
    for expected, got in zip(want, have, strict=True):
        assert got.token_ids == expected.token_ids
        assert got.finish_reason == expected.finish_reason
        torch.testing.assert_close(torch.tensor(got.logprobs), torch.tensor(expected.logprobs))


def greedy_matches_eager_on_the_demo_model(
    demo_assets: Path, decode: Literal["device", "graph"]
) -> None:
    """On the warm-started demo model, whose greedy answers end at different steps (and
    some run to the limit), `decode`'s completions are the eager loop's."""
    tokenizer = load_tokenizer(demo_assets / "model")
    model = load_policy(demo_assets / "model").eval()
    prompts = [tokenizer(t, add_special_tokens=False)["input_ids"] for t in PROMPT_TEXTS]
    eager, other = (
        HFEngine(model, tokenizer, decode="eager"),
        HFEngine(model, tokenizer, decode=decode),
    )
    greedy = SamplingParams(n=2, temperature=0.0, max_new_tokens=MAX_NEW)
    expected, got = eager.generate(prompts, greedy), other.generate(prompts, greedy)
    lengths = {len(c.token_ids) for c in expected}
    assert len(lengths) > 2 and MAX_NEW in lengths  # rows end early, at several steps, or not
    same_completions(expected, got)


def test_greedy_outputs_are_the_eager_loops(demo_assets: Path) -> None:
    """With finished rows dropped at a bucket boundary."""
    greedy_matches_eager_on_the_demo_model(demo_assets, "device")


def well_formed(completion: Completion, eos: set[int]) -> bool:
    ended = bool(completion.token_ids) and completion.token_ids[-1] in eos
    return (
        len(completion.logprobs) == len(completion.token_ids) <= MAX_NEW
        and not any(t in eos for t in completion.token_ids[:-1])
        and completion.finish_reason == ("eos" if ended else "length")
        and all(lp <= 0.0 for lp in completion.logprobs)
    )


def test_sampled_outputs_are_well_formed_and_seeded(
    model: torch.nn.Module, tokenizer: Any, prompts: list[list[int]]
) -> None:
    _, device = engines(model, tokenizer)
    sampling = SamplingParams(n=4, temperature=1.0, max_new_tokens=MAX_NEW, seed=7)
    first, again = device.generate(prompts, sampling), device.generate(prompts, sampling)
    assert all(well_formed(c, device.eos_ids) for c in first)
    assert [c.token_ids for c in first] == [c.token_ids for c in again]
    assert len({len(c.token_ids) for c in first}) > 2


def test_stop_strings_decode_eagerly(
    model: torch.nn.Module, tokenizer: Any, prompts: list[list[int]]
) -> None:
    eager, device = engines(model, tokenizer)
    sampling = SamplingParams(n=2, temperature=1.0, max_new_tokens=MAX_NEW, seed=3, stop=("1",))
    assert [c.token_ids for c in device.generate(prompts, sampling)] == [
        c.token_ids for c in eager.generate(prompts, sampling)
    ]


@pytest.fixture
def loop_reads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts the tensor calls that make the host wait for the device, made by the decode
    loop itself. (transformers' mask code checks the padding mask on the host at every
    forward; a captured step needs a static mask: the GPU issue's work.)"""
    counts: Counter[str] = Counter()
    for name in ("__int__", "__bool__", "item", "tolist", "nonzero"):
        original = getattr(torch.Tensor, name)

        def counted(self: torch.Tensor, *args: Any, _o: Any = original, _n: str = name) -> Any:
            if sys._getframe(1).f_code.co_filename == device_decode.__file__:
                counts[_n] += 1
            return _o(self, *args)

        monkeypatch.setattr(torch.Tensor, name, counted)
    return counts


def test_the_loop_reads_the_batch_once_per_bucket(
    model: torch.nn.Module, tokenizer: Any, prompts: list[list[int]], loop_reads: Counter[str]
) -> None:
    """The eager loop reads every step's tokens back; the device loop looks every
    SYNC_EVERY steps (a count, and the rows to keep when it drops finished ones)."""
    engine = HFEngine(model, tokenizer, decode="device")  # the model's own EOS: long rows
    steps = 32
    engine.generate(prompts, SamplingParams(n=2, temperature=1.0, max_new_tokens=steps))
    assert 0 < loop_reads.total() <= 2 * (steps // device_decode.SYNC_EVERY)

"""Seeded chunks make what is sampled independent of how many workers generate it."""

from __future__ import annotations

import pytest
import torch

from trainer.demo.model import build_model, build_tokenizer
from trainer.distributed.fsdp import optimizer_state_by_index, optimizer_state_by_name
from trainer.rollout.chunked import ChunkedRollout, chunk_bounds, chunk_seed, generate_chunk
from trainer.rollout.engine import SamplingParams
from trainer.rollout.hf import HFEngine


@pytest.fixture(scope="module")
def engine() -> HFEngine:
    torch.manual_seed(0)
    tokenizer = build_tokenizer()
    model = build_model(tokenizer, "tiny", hidden_size=64, num_layers=2).eval()
    return HFEngine(model, tokenizer, max_batch_size=6)


def prompts(count: int) -> list[list[int]]:
    g = torch.Generator().manual_seed(1)
    return [
        (
            5 + torch.randint(0, 100, (int(torch.randint(2, 9, (1,), generator=g)),), generator=g)
        ).tolist()
        for _ in range(count)
    ]


def test_chunk_seeds_differ_per_chunk_and_stay_unset_when_unseeded() -> None:
    assert chunk_seed(7, 0) != chunk_seed(7, 1) != chunk_seed(8, 1)
    assert chunk_seed(7, 3) == chunk_seed(7, 3)
    assert chunk_seed(None, 3) is None
    assert 0 <= (chunk_seed(2**62, 5) or 0) < 2**63


def test_two_workers_sharing_the_chunks_sample_what_one_process_samples(engine) -> None:
    sampling = SamplingParams(n=3, temperature=1.0, max_new_tokens=8, seed=11)
    asked = prompts(5)
    alone = ChunkedRollout(engine, micro_batch_size=6).generate(asked, sampling)  # 2 prompts x 3

    chunks = chunk_bounds(len(asked), 2)  # 3 chunks: worker 0 takes two, worker 1 one
    shares = [[0, 1], [2]]
    together = []
    for share in shares:
        for i in share:
            part = [asked[p] for p in chunks[i]]
            together += generate_chunk(engine, part, sampling, i, chunks[i].start)

    assert len(alone) == len(asked) * 3
    assert [c.prompt_index for c in alone] == [i for i in range(5) for _ in range(3)]
    assert [(c.prompt_index, c.token_ids, c.logprobs) for c in together] == [
        (c.prompt_index, c.token_ids, c.logprobs) for c in alone
    ]
    # Different chunks really are sampled from different streams.
    assert len({tuple(c.token_ids) for c in alone}) > 3


def test_optimizer_state_round_trips_between_index_and_name_keys() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2))
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.1)
    model(torch.randn(5, 3)).sum().backward()
    optimizer.step()
    names = [name for name, _ in model.named_parameters()]
    by_index = optimizer.state_dict()
    by_name = optimizer_state_by_name(by_index, names)
    assert set(by_name["state"]) == set(names)
    back = optimizer_state_by_index(by_name, names)
    assert back["param_groups"] == by_index["param_groups"]
    for i, state in by_index["state"].items():
        for key, value in state.items():
            torch.testing.assert_close(back["state"][i][key], value)
    with pytest.raises(KeyError, match="another model"):
        optimizer_state_by_name(by_index, names[:2])

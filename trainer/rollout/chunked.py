"""Generation in fixed chunks of prompts, each chunk with its own seed.

An engine samples a whole call from one random stream, so what one prompt gets
depends on which other prompts share the call. Cutting the prompts into chunks of a
fixed size, each sampled with a seed derived from (call seed, chunk index), makes the
samples a function of the seed and the prompts alone: one process generating every
chunk and N data-parallel workers generating a share of the chunks each produce the
same completions (bit for bit, on the same weights). A chunk fills the engine's batch
(`rollout.micro_batch_size` sequences) at the call's own `n`: a training call's groups of
`rollout.n`, a validation's `rollout.val_n` (one greedy answer per prompt, so 8x more
prompts per chunk than a step of 8 samples), so chunking costs no throughput.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import replace

import torch

from trainer.rollout.engine import Completion, RolloutEngine, SamplingParams


def chunk_prompts(micro_batch_size: int, n: int) -> int:
    """Prompts per chunk: as many as fill one engine batch of `micro_batch_size` rows when
    each prompt is sampled `n` times."""
    return max(1, micro_batch_size // n)


def chunk_bounds(num_prompts: int, per_chunk: int) -> list[range]:
    return [range(s, min(s + per_chunk, num_prompts)) for s in range(0, num_prompts, per_chunk)]


def chunk_seed(seed: int | None, chunk_index: int) -> int | None:
    """A well-mixed 63-bit seed per chunk (None stays None: unseeded, or greedy)."""
    if seed is None:
        return None
    digest = hashlib.blake2b(f"{seed}/{chunk_index}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") & (2**63 - 1)


def generate_chunk(
    engine: RolloutEngine,
    prompts: list[list[int]],
    sampling: SamplingParams,
    chunk_index: int,
    first_prompt: int,
) -> list[Completion]:
    """Completions of one chunk, `prompt_index` counted in the whole call."""
    seeded = replace(sampling, seed=chunk_seed(sampling.seed, chunk_index))
    completions = engine.generate(prompts, seeded)
    for c in completions:
        c.prompt_index += first_prompt
    return completions


class ChunkedRollout:
    """Wraps an engine so that every call is generated chunk by chunk (module docstring)."""

    def __init__(self, engine: RolloutEngine, micro_batch_size: int) -> None:
        if micro_batch_size < 1:
            raise ValueError(f"micro_batch_size must be >= 1, got {micro_batch_size}")
        self.engine = engine
        self.micro_batch_size = micro_batch_size

    def generate(self, prompts: list[list[int]], sampling: SamplingParams) -> list[Completion]:
        out: list[Completion] = []
        per_chunk = chunk_prompts(self.micro_batch_size, sampling.n)
        for index, bounds in enumerate(chunk_bounds(len(prompts), per_chunk)):
            chunk = [prompts[i] for i in bounds]
            out += generate_chunk(self.engine, chunk, sampling, index, bounds.start)
        return out

    def update_weights(self, state: Mapping[str, torch.Tensor]) -> None:
        self.engine.update_weights(state)

    def sleep(self) -> None:
        self.engine.sleep()

    def wake(self) -> None:
        self.engine.wake()

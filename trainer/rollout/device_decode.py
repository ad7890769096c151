"""Decoding without the host in the loop: the HF engine's decode on an accelerator.

The eager loop (`HFEngine._decode_eager`) reads every step's tokens back to the host to
append them to Python lists, check EOS and drop finished rows: one device-to-host sync
per token, which leaves a GPU idle between small kernels (decoding there is
launch-bound). Here every step's bookkeeping stays on the device: tokens and their
log-probabilities are written into preallocated (rows, max_new_tokens) tensors, EOS is
checked with `torch.isin`, and finished rows keep decoding (their tokens are ignored)
until the next bucket boundary, every `sync_every` steps. Only there does the host look:
it stops when every row has finished, and drops the finished rows from the batch and its
KV cache once they are at least half of it. One copy to the host at the end builds the
completions.

What it computes: with greedy decoding, the eager loop's tokens (each row attends only
to itself, so the rows kept alongside it change nothing but float rounding of batched
products). Sampled decoding draws from the same distributions, but the finished rows
still draw from the generator until they are dropped, so a seed gives other samples than
the eager loop's. Stop strings need the tokenizer at every step: a call with `stop`
decodes eagerly.

It is the engine's loop on CUDA (`HFEngine(decode=...)`); the CPU keeps the eager loop,
whose per-step compaction is cheaper there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn

from trainer.config.sampling import SamplingParams
from trainer.rollout.sampler import sample_next

# Steps between the host's looks at the batch: more is fewer syncs, less is fewer wasted
# forwards of finished rows.
SYNC_EVERY = 8


@dataclass
class Decoded:
    """Per row: its tokens and log-probabilities (its first `lengths[i]` columns), and
    whether it ended on EOS (else it ran out of tokens)."""

    tokens: Tensor  # (B, max_new_tokens) long
    logprobs: Tensor  # (B, max_new_tokens) float
    lengths: Tensor  # (B,) long
    ended_on_eos: Tensor  # (B,) bool


class DecodeOutputs:
    """The device loops' record of what each row decoded: preallocated (rows,
    max_new_tokens) tensors written at every step with no read back to the host.
    `batch_rows` maps the forward's batch positions to rows; a position may map to a row
    that is already finished (its draws are then ignored)."""

    def __init__(self, rows: int, steps: int, pad_id: int, device: torch.device) -> None:
        self.tokens = torch.full((rows, steps), pad_id, dtype=torch.long, device=device)
        self.logprobs = torch.zeros((rows, steps), dtype=torch.float32, device=device)
        self.lengths = torch.zeros(rows, dtype=torch.long, device=device)
        self.finished = torch.zeros(rows, dtype=torch.bool, device=device)
        self.ended_on_eos = torch.zeros(rows, dtype=torch.bool, device=device)

    def record(
        self, step: int, batch_rows: Tensor, tokens: Tensor, logprobs: Tensor, eos_ids: Tensor
    ) -> None:
        live = ~self.finished[batch_rows]
        self.tokens[batch_rows, step] = torch.where(live, tokens, self.tokens[batch_rows, step])
        self.logprobs[batch_rows, step] = torch.where(
            live, logprobs.float(), self.logprobs[batch_rows, step]
        )
        self.lengths[batch_rows] += live.long()
        hit = torch.isin(tokens, eos_ids) & live
        self.ended_on_eos[batch_rows] |= hit
        self.finished[batch_rows] |= hit

    def alive(self, batch_rows: Tensor) -> Tensor:
        """(A,) bool: which batch positions still decode a row that has not finished."""
        return ~self.finished[batch_rows]

    def decoded(self, rows: int) -> Decoded:
        """The first `rows` rows (a loop may keep scratch rows after them)."""
        return Decoded(
            self.tokens[:rows], self.logprobs[:rows], self.lengths[:rows], self.ended_on_eos[:rows]
        )


def decode_on_device(
    model: nn.Module,
    cache: Any,
    logits: Tensor,  # (B, V) float: the prefill's last logits per row
    attention_mask: Tensor,  # (B, P)
    next_pos: Tensor,  # (B,)
    sampling: SamplingParams,
    generator: torch.Generator | None,
    eos_ids: Tensor,  # (E,) long, on the device
    pad_id: int,
    sync_every: int = SYNC_EVERY,
) -> Decoded:
    rows, device = logits.shape[0], logits.device
    steps = sampling.max_new_tokens
    outputs = DecodeOutputs(rows, steps, pad_id, device)
    batch_rows = torch.arange(rows, device=device)  # batch position -> row
    for step in range(steps):
        tokens, logprobs = sample_next(logits, sampling, generator)  # (A,), (A,)
        outputs.record(step, batch_rows, tokens, logprobs, eos_ids)
        if step == steps - 1:
            break
        if (step + 1) % sync_every == 0:  # the host looks: one sync per bucket
            alive = outputs.alive(batch_rows)
            count = int(alive.sum())
            if count == 0:
                break
            if count <= len(batch_rows) // 2:  # drop the finished rows and their cache
                keep = alive.nonzero()[:, 0]
                cache.batch_select_indices(keep)
                batch_rows, tokens = batch_rows[keep], tokens[keep]
                attention_mask, next_pos = attention_mask[keep], next_pos[keep]
        attention_mask = torch.cat(
            [attention_mask, attention_mask.new_ones((len(batch_rows), 1))], dim=-1
        )
        out = model(
            input_ids=tokens[:, None],
            attention_mask=attention_mask,
            position_ids=next_pos[:, None],
            past_key_values=cache,
            use_cache=True,
        )
        cache = out.past_key_values
        logits = out.logits[:, -1, :].float()
        next_pos = next_pos + 1
    return outputs.decoded(rows)

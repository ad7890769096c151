"""How a rollout batch is split across data-parallel ranks and into micro-batches.

Every rank holds the whole rollout batch (token ids and a few floats per token: small
next to the model) and works on a contiguous shard of its rows. Micro-batches are cut
from that shard by count (`actor.micro_batch_size`) or by a token budget
(`actor.max_tokens_per_micro_batch`). FSDP ranks must run the same number of forward
and backward passes, since each one all-gathers parameters; a rank with fewer
micro-batches than the busiest rank therefore runs "dummy" ones: one real row whose
loss weight is 0, which keeps the collectives in step and changes nothing else.

Because every rank sees the whole batch, each can compute every other rank's plan
locally: the plans need no communication. One process alone is the world of size 1:
the same code, no dummies, no communication, and (by count) exactly the contiguous
micro-batches of the single-process trainer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields, replace
from typing import Any, Protocol

import torch
from torch import Tensor

from trainer.training.batch import RolloutBatch

# Sums of (metric * weight) and of weights, per metric name (see trainer.training.update).
# They stay tensors on the model's device while an update runs: reading each micro-batch's
# metrics to the host would make the host wait for its kernels before queueing the next.
MetricSums = dict[str, list[Tensor | float]]


class DataGroup(Protocol):
    """This process's place among the data-parallel ranks."""

    @property
    def rank(self) -> int: ...

    @property
    def world_size(self) -> int: ...

    def all_reduce_sum(self, values: Tensor) -> Tensor:
        """Element-wise sum over all ranks (every rank gets the result)."""
        ...


@dataclass(frozen=True)
class SingleProcess:
    rank: int = 0
    world_size: int = 1

    def all_reduce_sum(self, values: Tensor) -> Tensor:
        return values


SINGLE_PROCESS = SingleProcess()


def shard_range(rows: int, world_size: int, rank: int) -> range:
    """Rows of `rank`: contiguous, the first `rows % world_size` ranks get one more."""
    base, extra = divmod(rows, world_size)
    start = rank * base + min(rank, extra)
    return range(start, start + base + (1 if rank < extra else 0))


@dataclass(frozen=True)
class MicroBatch:
    batch: RolloutBatch
    rows: Tensor  # (b,) long: the rows' indices in the batch it was cut from
    active: float  # 1.0, or 0.0 for a dummy that only keeps the ranks in step


@dataclass(frozen=True)
class RowLengths:
    prompt: list[int]  # real prompt tokens per row
    response: list[int]  # real response tokens per row
    group: list[int]  # group index per row (rows of a group share their prompt)


def row_lengths(batch: RolloutBatch) -> RowLengths:
    prompt_mask = batch.attention_mask[:, : batch.prompt_width]
    return RowLengths(
        prompt=prompt_mask.sum(-1).tolist(),
        response=batch.response_mask.sum(-1).long().tolist(),
        group=batch.group_index.tolist(),
    )


def micro_batch_cost(rows: list[int], lengths: RowLengths, packed: bool) -> int:
    """Token positions one forward over `rows` costs once padding is trimmed.

    Padded layout: rows x (longest prompt + longest response). Shared-prompt packed
    layout (`trainer.training.packing`): groups x the longest `prompt + its responses` sequence.
    """
    if not rows:
        return 0
    if not packed:
        return len(rows) * (
            max(lengths.prompt[i] for i in rows) + max(max(1, lengths.response[i]) for i in rows)
        )
    segments: dict[int, int] = {}
    for i in rows:
        segments.setdefault(lengths.group[i], lengths.prompt[i])
        segments[lengths.group[i]] += lengths.response[i]
    return len(segments) * max(segments.values())


def split_by_tokens(
    rows: range, lengths: RowLengths, max_tokens: int, packed: bool
) -> list[list[int]]:
    """Greedy packing of `rows` into micro-batches costing at most `max_tokens` each.

    Padded: longest rows first, so each micro-batch's padding is small. Packed: rows of
    a group together, so their prompt is shared. A row costing more than the budget on
    its own gets a micro-batch to itself (a row is never split).
    """
    if packed:
        order = sorted(rows, key=lambda i: (lengths.group[i], i))
    else:
        order = sorted(rows, key=lambda i: (-(lengths.prompt[i] + lengths.response[i]), i))
    parts: list[list[int]] = []
    current: list[int] = []
    for i in order:
        if current and micro_batch_cost([*current, i], lengths, packed) > max_tokens:
            parts.append(current)
            current = []
        current.append(i)
    if current:
        parts.append(current)
    return parts


def split_rows(
    rows: range,
    lengths: RowLengths | None,
    micro_batch_size: int,
    max_tokens: int | None,
    packed: bool,
) -> list[list[int]]:
    if max_tokens is None or lengths is None:
        return [list(rows[i : i + micro_batch_size]) for i in range(0, len(rows), micro_batch_size)]
    return split_by_tokens(rows, lengths, max_tokens, packed)


def plan_micro_batches(
    batch: RolloutBatch,
    group: DataGroup,
    micro_batch_size: int,
    max_tokens: int | None = None,
    packed: bool = False,
) -> list[tuple[list[int], float]]:
    """This rank's micro-batches as (row indices, active), as many as the busiest rank's."""
    lengths = row_lengths(batch) if max_tokens is not None else None
    plans = [
        split_rows(
            shard_range(batch.size, group.world_size, rank),
            lengths,
            micro_batch_size,
            max_tokens,
            packed,
        )
        for rank in range(group.world_size)
    ]
    mine = plans[group.rank]
    busiest = max(len(plan) for plan in plans)
    # Any real row will do for a dummy: its loss is multiplied by 0.
    dummy_row = mine[0][0] if mine else 0
    return [(rows, 1.0) for rows in mine] + [([dummy_row], 0.0)] * (busiest - len(mine))


def trim_padding(batch: RolloutBatch, keep_response_width: bool = False) -> RolloutBatch:
    """Drop the columns that are padding in every row: the prompt's left padding and the
    responses' right padding. Masked positions contribute nothing, so every loss and
    log-prob is unchanged (up to float rounding); the forward gets cheaper.

    `keep_response_width` keeps the response columns: for losses whose normaliser is the
    response width (the critic's seq-mean-token-sum-norm).
    """
    width_p, width_r = batch.prompt_width, batch.response_width
    used_prompt = batch.attention_mask[:, :width_p].any(dim=0).nonzero()
    left = int(used_prompt[0]) if used_prompt.numel() else width_p - 1
    used_response = batch.response_mask.any(dim=0).nonzero()
    keep_r = width_r
    if not keep_response_width:
        keep_r = int(used_response[-1]) + 1 if used_response.numel() else 1
    cut: dict[str, Any] = {}
    for f in fields(batch):
        value = getattr(batch, f.name)
        if not isinstance(value, Tensor) or value.dim() != 2:
            continue
        if value.shape[1] == width_p + width_r:
            cut[f.name] = value[:, left : width_p + keep_r]
        elif value.shape[1] == width_r:
            cut[f.name] = value[:, :keep_r]
        else:
            raise ValueError(f"field {f.name} has width {value.shape[1]}, neither P+R nor R")
    return replace(batch, prompt_width=width_p - left, **cut)


def micro_batches(
    batch: RolloutBatch,
    group: DataGroup,
    micro_batch_size: int,
    max_tokens: int | None = None,
    packed: bool = False,
    keep_response_width: bool = False,
) -> Iterator[MicroBatch]:
    """This rank's micro-batches of `batch` (see the module docstring)."""
    for rows, active in plan_micro_batches(batch, group, micro_batch_size, max_tokens, packed):
        contiguous = rows == list(range(rows[0], rows[0] + len(rows)))
        index = torch.tensor(rows, dtype=torch.long)
        micro = batch.select(slice(rows[0], rows[0] + len(rows)) if contiguous else index)
        if max_tokens is not None and not packed:
            micro = trim_padding(micro, keep_response_width)
        yield MicroBatch(batch=micro, rows=index, active=active)


def map_rows(
    batch: RolloutBatch,
    group: DataGroup,
    micro_batch_size: int,
    max_tokens: int | None,
    packed: bool,
    forward: Callable[[RolloutBatch], Tensor],
) -> Tensor:
    """`forward` ((b, R') per-response-token values) over this rank's shard of `batch`,
    micro-batch by micro-batch; returns (shard rows, R) with trimmed columns zero."""
    shard = shard_range(batch.size, group.world_size, group.rank)
    out: Tensor | None = None
    for micro in micro_batches(batch, group, micro_batch_size, max_tokens, packed):
        values = forward(micro.batch)  # (b, R')
        if out is None:
            out = values.new_zeros((len(shard), batch.response_width))
        if micro.active:
            out[micro.rows.to(values.device) - shard.start, : values.shape[1]] = values
    if out is None:  # an empty shard runs no forward at all (only when the batch is empty)
        return batch.response_mask.new_zeros((0, batch.response_width))
    return out


def reduce_metric_sums(sums: MetricSums, group: DataGroup) -> dict[str, list[float]]:
    """Every rank's (value * weight, weight) sums added, as host floats: one read of the
    device for all of them (and one collective over the ranks)."""
    keys = sorted(sums)  # the same order on every rank
    values = [x for k in keys for x in sums[k]]
    if not values:
        return {}
    device = next((x.device for x in values if isinstance(x, Tensor)), None)
    flat = torch.stack([torch.as_tensor(x, dtype=torch.float64, device=device) for x in values])
    total = group.all_reduce_sum(flat.cpu()).tolist()
    return {k: [total[2 * i], total[2 * i + 1]] for i, k in enumerate(keys)}


def full_tensor(value: Tensor) -> Tensor:
    """A DTensor's full value (FSDP2's gradient norm is one); a plain tensor as is."""
    to_full = getattr(value, "full_tensor", None)
    return to_full() if callable(to_full) else value

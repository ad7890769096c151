"""Shared-prefix scoring: each group's prompt once, then its responses as rows behind it.

The block-packed layout (`trainer.training.packing`) puts a group's prompt and all its responses in
one sequence with a dense block mask. Its attention costs (prompt + n responses)^2 per
group, of which only a fraction is needed; when responses are long (a group of 8 x 128
tokens is a 1,052-token sequence) that masked dense attention costs more than the whole
padded layout (measured 2.5x slower than padded at 64-token responses on the 25M bench
model). Here the prompts of a micro-batch go through the model once (one row per distinct
prompt), their key/value cache is gathered for each row, and the responses go through as
a (rows, longest response - 1) batch attending to that cache: no prompt copies, no block
mask, attention only over (prompt + own response). Autograd flows through the gathered
cache into the prompt pass, so gradients are those of the padded layout too.

Real lengths come from the attention mask (in a multi-turn response, tool tokens have
response_mask 0 but are real context); the loss stays multiplied by `response_mask`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn
from transformers.cache_utils import DynamicCache

from trainer.rollout.forward_reuse import reusing
from trainer.training.batch import RolloutBatch
from trainer.training.packing import segments_by_prompt

# Cost of one query-key pair of masked attention, in token positions through the model
# (the linear layers). By FLOPs it is ~4d / (2 (4d^2 + 3 d ff)), 1/3000 at d = 512, but
# the dense masked attention of the packed layout runs far below matmul speed: fitted to
# the padded / packed update times of the 25M bench model at 64-token responses on CPU
# (the packed layout was 2.5x slower with 1/3 fewer token positions), it is ~1/170.
# The value in use, 1/128, predates that fit and was kept: with 1/170 the layout chosen
# differs on ~4% of random batch shapes (groups of 4-8, prompts to 128 and responses to
# 512 tokens), so changing it changes which layout runs, and wants the long-completion
# timings (docs/benchmarks.md) measured again first.
ATTENTION_PAIR_COST = 1 / 128
# Fixed cost of one more forward/backward (per-op overhead, accumulating every parameter's
# gradient), in token positions: measured ~20 on the 25M bench model on CPU; doubled here
# and more so rows are not cut into many small forwards for little padding.
BUCKET_OVERHEAD = 64
# Fixed cost of the shared-prefix path beyond block packing's single forward, in token
# positions: its prompt pass, and each bucket's cache gather (and its backward scatter) and
# 4-D mask. Without it the layouts' estimates are close for short answers (64 rows of ~6
# tokens behind 12-token prompts: ~540 against ~700), yet the shared-prefix layout was
# 1.23-1.35x slower there on the 3.3M demo model at two threads (1.05x at one), an excess
# of 200-380 positions at two threads. For long responses the packed layout's quadratic
# attention outweighs it many times over (8 x 128-token responses: ~37k against ~9k).
PREFIX_OVERHEAD = 256


def layout_costs(
    prompt_lens: list[int], response_lens: list[int], groups: list[int]
) -> tuple[float, float]:
    """Estimated cost (token positions, attention pairs weighted) of the rows' forward in
    the block-packed layout (one forward) and in the shared-prefix layout (PREFIX_OVERHEAD,
    the prompt pass, and the length buckets as `length_buckets` picks them). Rows of a
    group are taken to share its prompt; sequences are padded to the longest (of their
    bucket)."""
    sequences: dict[int, int] = {}
    prompts: dict[int, int] = {}
    for prompt, response, group in zip(prompt_lens, response_lens, groups, strict=True):
        prompts.setdefault(group, prompt)
        sequences[group] = sequences.get(group, prompt) + response
    n_groups = len(sequences)
    packed_width = max(sequences.values())
    packed = n_groups * packed_width * (1 + ATTENTION_PAIR_COST * packed_width)
    prompt_width = max(prompts.values())
    prompt_pass = n_groups * prompt_width * (1 + ATTENTION_PAIR_COST * prompt_width)
    _, responses = _bucketing(response_lens, prompt_width)
    return packed, PREFIX_OVERHEAD + prompt_pass + responses


def prefers_shared_prefix(batch: RolloutBatch) -> bool:
    """True when the shared-prefix layout is estimated cheaper than block packing.

    Single process only: FSDP ranks must run the same forwards, and the layout and its
    length buckets (one forward each) are chosen from each rank's own rows, so ranks
    could disagree; distributed runs keep block packing (one forward per micro-batch)."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return False
    mask = batch.attention_mask
    packed, prefix = layout_costs(
        mask[:, : batch.prompt_width].sum(dim=1).tolist(),
        mask[:, batch.prompt_width :].sum(dim=1).tolist(),
        batch.group_index.tolist(),
    )
    return prefix < packed


@dataclass
class SharedPrefixBatch:
    prompt_ids: Tensor  # (G, P) long, left-padded distinct prompts
    prompt_mask: Tensor  # (G, P) long
    row_prompt: Tensor  # (B,) long: each batch row's prompt in `prompt_ids`
    response_ids: Tensor  # (B, L - 1) long: response tokens that predict a next token
    response_mask: Tensor  # (B, L - 1) long: 1 on real tokens (attention mask)
    response_pos: Tensor  # (B, L - 1) long: position ids
    lengths: Tensor  # (B,) long: real response tokens per row (attention mask)
    width: int  # L: longest real response in the batch (columns scored)


def shared_prefix_layout(batch: RolloutBatch) -> SharedPrefixBatch:
    """Distinct prompts (by group and tokens) and the responses trimmed to the longest."""
    width_p = batch.prompt_width
    segments = segments_by_prompt(batch.input_ids, batch.attention_mask, batch.group_index, width_p)
    rows = batch.size
    prompt_len = max(len(prompt) for prompt, _ in segments)
    prompt_ids = torch.zeros((len(segments), prompt_len), dtype=torch.long)
    prompt_mask = torch.zeros((len(segments), prompt_len), dtype=torch.long)
    row_prompt = torch.zeros(rows, dtype=torch.long)
    real_prompt = torch.zeros(rows, dtype=torch.long)
    for index, (prompt, members) in enumerate(segments):
        prompt_ids[index, prompt_len - len(prompt) :] = torch.tensor(prompt, dtype=torch.long)
        prompt_mask[index, prompt_len - len(prompt) :] = 1
        row_prompt[members] = index
        real_prompt[members] = len(prompt)
    attention = batch.attention_mask[:, width_p:].cpu()
    used = attention.any(dim=0).nonzero()
    width = int(used[-1]) + 1 if used.numel() else 1
    response_ids = batch.input_ids[:, width_p : width_p + width - 1].cpu()
    response_mask = attention[:, : width - 1]
    response_pos = real_prompt[:, None] + torch.arange(width - 1)[None, :]
    return SharedPrefixBatch(
        prompt_ids=prompt_ids,
        prompt_mask=prompt_mask,
        row_prompt=row_prompt,
        response_ids=response_ids,
        response_mask=response_mask,
        response_pos=response_pos,
        lengths=attention.sum(dim=1),
        width=width,
    )


def length_buckets(lengths: list[int], prompt_width: int) -> list[list[int]]:
    """Rows (indices into `lengths`, real response lengths) in buckets scored by one
    forward each, padded to the bucket's longest: the split of the rows sorted by length
    that minimises the estimated cost (`layout_costs`' units plus BUCKET_OVERHEAD per
    forward). Equal lengths (long completions at their limit) give one bucket."""
    return _bucketing(lengths, prompt_width)[0]


def _bucketing(lengths: list[int], prompt_width: int) -> tuple[list[list[int]], float]:
    """`length_buckets`' buckets and their estimated cost, BUCKET_OVERHEAD per bucket."""
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    scored = [max(lengths[i], 1) - 1 for i in order]

    def cost(first: int, end: int) -> float:  # rows order[first:end], widest first
        width = scored[first]
        attention = 1 + ATTENTION_PAIR_COST * (prompt_width + width)
        return BUCKET_OVERHEAD + (end - first) * width * attention

    # best[j]: cheapest split of the first j sorted rows; cut[j]: where its last bucket starts
    best = [0.0] + [float("inf")] * len(order)
    cut = [0] * (len(order) + 1)
    for end in range(1, len(order) + 1):
        for first in range(end):
            total = best[first] + cost(first, end)
            if total < best[end]:
                best[end], cut[end] = total, first
    buckets: list[list[int]] = []
    end = len(order)
    while end > 0:
        buckets.append(order[cut[end] : end])
        end = cut[end]
    return buckets[::-1], best[-1]


def shared_prefix_response_logits(model: nn.Module, batch: RolloutBatch) -> Tensor:
    """Logits (B, L, V) that predicted response tokens 0..L-1 (L = longest real response;
    columns past a row's own length are zero), as the padded layout computes them."""
    layout = shared_prefix_layout(batch)
    device = batch.input_ids.device
    prompt_mask = layout.prompt_mask.to(device)
    prompt = model(
        input_ids=layout.prompt_ids.to(device),
        attention_mask=prompt_mask,
        position_ids=(prompt_mask.cumsum(-1) - 1).clamp(min=0),
        use_cache=True,
        logits_to_keep=1,
    )
    row_prompt = layout.row_prompt.to(device)
    first = prompt.logits[row_prompt, -1:, :]  # (B, 1, V): predicts response token 0
    if layout.width == 1:
        return first
    prompt_states = [(layer.keys, layer.values) for layer in prompt.past_key_values.layers]
    lengths = layout.lengths.tolist()
    parts: list[Tensor] = []
    rows: list[int] = []
    for bucket in length_buckets(lengths, layout.prompt_ids.shape[1]):
        width = max(lengths[i] for i in bucket)
        if width <= 1:  # nothing to score past the first token
            parts.append(first.new_zeros((len(bucket), layout.width - 1, first.shape[-1])))
            rows += bucket
            continue
        picked = torch.tensor(bucket, device=device)
        prompts = row_prompt[picked]
        # Each row attends to its own prompt's keys and values: gathered, differentiable.
        cache = DynamicCache(ddp_cache_data=[(k[prompts], v[prompts]) for k, v in prompt_states])
        response_mask = layout.response_mask[bucket, : width - 1].to(device)
        # What the rollout computed for these rows with these weights, reused where a
        # converter installed that (trainer.rollout.forward_reuse).
        ids = batch.sample_ids[picked] if batch.sample_ids is not None else None
        with reusing(model, ids, width - 1):
            out = model(
                input_ids=layout.response_ids[bucket, : width - 1].to(device),
                attention_mask=torch.cat([prompt_mask[prompts], response_mask], dim=1),
                position_ids=layout.response_pos[bucket, : width - 1].to(device),
                past_key_values=cache,
                use_cache=True,
            )
        parts.append(nn.functional.pad(out.logits, (0, 0, 0, layout.width - width)))
        rows += bucket
    rest = torch.cat(parts, dim=0)[torch.tensor(rows, device=device).argsort()]
    return torch.cat([first, rest], dim=1)  # (B, L, V)

"""Shared-prompt packing: one forward per GRPO group instead of one per response.

The padded layout (`RolloutBatch`) repeats each prompt for every one of its n responses
and pads every response to the longest one. Scoring a batch that way spends most of the
forward/backward on copies of prompts and on padding. Packing lays out each group as one
sequence, `prompt | response_1 | response_2 | ... | response_n`, with a block mask in which
a response token sees the prompt and the earlier tokens of its own response only, and
position ids that restart after the prompt for every response. Each response token then
attends to exactly the tokens it attended to in the padded layout, at the same positions,
so log-probs (and gradients) are the same up to float rounding; the number of token
positions drops from B * (P + R) to about G * P + sum(response lengths).

Rows are grouped by `group_index` and kept together only when their prompt tokens are
equal too, so a batch whose "groups" differ in prompt still packs correctly (one row each).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass
class PackedBatch:
    input_ids: Tensor  # (G, T) long, right-padded
    position_ids: Tensor  # (G, T) long
    attention_mask: Tensor  # (G, 1, T, T) bool, True where a query may attend to a key
    # For every response token of the padded batch: where it sits in the packed layout.
    source_rows: Tensor  # (N,) long, packed row of the *predicting* position
    source_cols: Tensor  # (N,) long, packed column of the predicting position
    batch_rows: Tensor  # (N,) long, row in the padded batch
    batch_cols: Tensor  # (N,) long, response column in the padded batch
    first_logit_col: int  # logits are needed from this column on (logits_to_keep)


def segments_by_prompt(
    input_ids: Tensor, attention_mask: Tensor, group_index: Tensor, width_p: int
) -> list[tuple[list[int], list[int]]]:
    """[(prompt tokens, [batch rows that share it])], in first-seen order."""
    groups: dict[tuple[int, tuple[int, ...]], list[int]] = {}
    prompts: dict[tuple[int, tuple[int, ...]], list[int]] = {}
    ids = input_ids[:, :width_p].tolist()
    keep = attention_mask[:, :width_p].tolist()
    for row, (tokens, mask, group) in enumerate(zip(ids, keep, group_index.tolist(), strict=True)):
        prompt = [t for t, m in zip(tokens, mask, strict=True) if m]
        key = (int(group), tuple(prompt))
        groups.setdefault(key, []).append(row)
        prompts[key] = prompt
    return [(prompts[k], rows) for k, rows in groups.items()]


def pack_shared_prompts(
    input_ids: Tensor,
    attention_mask: Tensor,
    response_mask: Tensor,
    group_index: Tensor,
    prompt_width: int,
    pad_token_id: int = 0,
) -> PackedBatch:
    """Lay out a padded rollout batch (see `trainer.training.batch`) as one sequence per group."""
    width_r = response_mask.shape[1]
    # Real response tokens are contiguous from col P; count them with the attention mask, as
    # tokens a multi-turn response holds from a tool or user have response_mask 0.
    lengths = attention_mask[:, prompt_width:].sum(dim=1).long().tolist()
    responses = input_ids[:, prompt_width : prompt_width + width_r].tolist()
    segments = segments_by_prompt(input_ids, attention_mask, group_index, prompt_width)
    total = [len(p) + sum(lengths[r] for r in rows) for p, rows in segments]
    width = max(total)
    g = len(segments)
    ids = torch.full((g, width), pad_token_id, dtype=torch.long)
    pos = torch.zeros((g, width), dtype=torch.long)
    mask = torch.zeros((g, 1, width, width), dtype=torch.bool)
    src_r: list[int] = []
    src_c: list[int] = []
    dst_r: list[int] = []
    dst_c: list[int] = []
    first_col = width
    for gi, (prompt, rows) in enumerate(segments):
        p = len(prompt)
        ids[gi, :p] = torch.tensor(prompt, dtype=torch.long)
        pos[gi, :p] = torch.arange(p)
        mask[gi, 0, :p, :p] = torch.ones(p, p, dtype=torch.bool).tril()
        start = p
        for row in rows:
            n = lengths[row]
            if n == 0:
                continue
            end = start + n
            ids[gi, start:end] = torch.tensor(responses[row][:n], dtype=torch.long)
            pos[gi, start:end] = torch.arange(p, p + n)
            mask[gi, 0, start:end, :p] = True
            mask[gi, 0, start:end, start:end] = torch.ones(n, n, dtype=torch.bool).tril()
            # Token j is predicted by the position before it: the prompt's last token for
            # j = 0, else the response's own token j - 1.
            src_c += [p - 1, *range(start, end - 1)]
            src_r += [gi] * n
            dst_r += [row] * n
            dst_c += list(range(n))
            first_col = min(first_col, p - 1)
            start = end
        # Padding attends to itself only, so no softmax row is empty (no NaN).
        pad = torch.arange(start, width)
        mask[gi, 0, pad, pad] = True
    return PackedBatch(
        input_ids=ids,
        position_ids=pos,
        attention_mask=mask,
        source_rows=torch.tensor(src_r, dtype=torch.long),
        source_cols=torch.tensor(src_c, dtype=torch.long),
        batch_rows=torch.tensor(dst_r, dtype=torch.long),
        batch_cols=torch.tensor(dst_c, dtype=torch.long),
        first_logit_col=first_col if src_c else 0,
    )

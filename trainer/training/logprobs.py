"""Per-token log-probabilities (and entropy) of response tokens under a model."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from trainer.algorithms.entropy import entropy_from_logits
from trainer.training.batch import RolloutBatch
from trainer.training.packing import PackedBatch, pack_shared_prompts
from trainer.training.shared_prefix import prefers_shared_prefix, shared_prefix_response_logits


@dataclass
class TokenStats:
    logprobs: Tensor  # (B, R)
    entropy: Tensor | None  # (B, R)


def response_logits(model: nn.Module, batch: RolloutBatch, temperature: float) -> Tensor:
    """Logits that predicted each response token, divided by the sampling temperature.

    Only the last R+1 positions go through the LM head (`logits_to_keep`): the
    prompt's logits are never needed, which saves the vocab projection on them.
    """
    width_r = batch.response_width
    out = model(
        input_ids=batch.input_ids,
        attention_mask=batch.attention_mask,
        position_ids=batch.position_ids,
        logits_to_keep=width_r + 1,
        use_cache=False,
    )
    logits = out.logits[:, :-1, :].float()  # (B, R, V): position t predicts token t+1
    if temperature > 0 and temperature != 1.0:
        logits = logits / temperature
    return logits


def packed_response_logits(
    model: nn.Module, batch: RolloutBatch, temperature: float
) -> tuple[Tensor, PackedBatch]:
    """Logits (N, V) of every response token, scored in the shared-prompt packed layout
    (`trainer.training.packing`): one sequence per group, no prompt copies, no response padding."""
    packed = pack_shared_prompts(
        batch.input_ids,
        batch.attention_mask,
        batch.response_mask,
        batch.group_index,
        batch.prompt_width,
    )
    device = batch.input_ids.device
    width = packed.input_ids.shape[1]
    first = packed.first_logit_col
    out = model(
        input_ids=packed.input_ids.to(device),
        attention_mask=packed.attention_mask.to(device),
        position_ids=packed.position_ids.to(device),
        logits_to_keep=width - first,
        use_cache=False,
    )
    rows = packed.source_rows.to(device)
    cols = packed.source_cols.to(device) - first
    logits = out.logits[rows, cols].float()  # (N, V)
    if temperature > 0 and temperature != 1.0:
        logits = logits / temperature
    return logits, packed


def response_token_stats(
    model: nn.Module,
    batch: RolloutBatch,
    temperature: float,
    with_entropy: bool,
    *,
    packed: bool = False,
    shared_prefix: bool = True,
    entropy_grad: bool = True,
) -> TokenStats:
    """Log-probs (B, R) of the response tokens and, if asked, the policy's entropy there.

    `packed` scores each group's prompt once: block-packed (`trainer.training.packing`) or, when
    that is estimated cheaper (long responses), shared-prefix (`trainer.training.shared_prefix`);
    the same values either way, far fewer token positions when groups share prompts.
    `shared_prefix=False` keeps block packing whatever the estimate (distributed runs
    always do), so a single process computes exactly what N workers compute.
    `entropy_grad=False` computes the entropy without an autograd graph: enough when it is
    only reported, not in the loss.
    """
    if packed and shared_prefix and prefers_shared_prefix(batch):
        logits = shared_prefix_response_logits(model, batch)  # (B, L, V), L <= R
        if temperature > 0 and temperature != 1.0:
            logits = logits / temperature
        stats = _padded_token_stats(logits, batch, with_entropy, entropy_grad)
        width = batch.response_width
        return TokenStats(
            logprobs=_widen(stats.logprobs, width),
            entropy=None if stats.entropy is None else _widen(stats.entropy, width),
        )
    if packed:
        flat_logits, layout = packed_response_logits(model, batch, temperature)  # (N, V)
        device = flat_logits.device
        rows, cols = layout.batch_rows.to(device), layout.batch_cols.to(device)
        targets = batch.input_ids[:, batch.prompt_width :][rows, cols]  # (N,)
        flat_lp = flat_logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        flat_lp = flat_lp - torch.logsumexp(flat_logits, dim=-1)
        logprobs = flat_logits.new_zeros(batch.response_mask.shape).index_put((rows, cols), flat_lp)
        entropy = None
        if with_entropy:
            with torch.set_grad_enabled(entropy_grad and torch.is_grad_enabled()):
                flat_h = entropy_from_logits(flat_logits if entropy_grad else flat_logits.detach())
                entropy = flat_h.new_zeros(batch.response_mask.shape).index_put(
                    (rows, cols), flat_h
                )
        return TokenStats(logprobs=logprobs, entropy=entropy)
    logits = response_logits(model, batch, temperature)  # (B, R, V)
    return _padded_token_stats(logits, batch, with_entropy, entropy_grad)


def _padded_token_stats(
    logits: Tensor, batch: RolloutBatch, with_entropy: bool, entropy_grad: bool
) -> TokenStats:
    """Stats of the first logits.shape[1] response columns from (B, R', V) logits."""
    width = logits.shape[1]
    targets = batch.input_ids[:, batch.prompt_width : batch.prompt_width + width]  # (B, R')
    picked = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1)  # (B, R')
    logprobs = picked - torch.logsumexp(logits, dim=-1)
    entropy = None
    if with_entropy:
        with torch.set_grad_enabled(entropy_grad and torch.is_grad_enabled()):
            entropy = entropy_from_logits(logits if entropy_grad else logits.detach())
    return TokenStats(logprobs=logprobs, entropy=entropy)


def _widen(values: Tensor, width: int) -> Tensor:
    """(B, R') -> (B, R) with zeros in the columns past every real response."""
    if values.shape[1] == width:
        return values
    return torch.nn.functional.pad(values, (0, width - values.shape[1]))


@torch.no_grad()
def compute_logprobs(
    model: nn.Module,
    batch: RolloutBatch,
    temperature: float,
    micro_batch_size: int,
    packed: bool = False,
    shared_prefix: bool = True,
) -> Tensor:
    """Log-probs of every response token, in micro-batches, without gradients."""
    parts = [
        response_token_stats(
            model,
            batch.select(slice(i, i + micro_batch_size)),
            temperature,
            False,
            packed=packed,
            shared_prefix=shared_prefix,
        ).logprobs
        for i in range(0, batch.size, micro_batch_size)
    ]
    return torch.cat(parts, dim=0)


def response_sum_pi_squared(model: nn.Module, batch: RolloutBatch, temperature: float) -> Tensor:
    """(B, R) sum over the vocabulary of the squared probabilities of the distribution that
    sampled each response token (temperature applied), zero off the response: the path
    variance term of the optimal token baselines (verl's calculate_sum_pi_squared)."""
    probs = torch.softmax(response_logits(model, batch, temperature), dim=-1)  # (B, R, V)
    return probs.square().sum(dim=-1) * batch.response_mask

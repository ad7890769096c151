"""PPO-style updates of the actor and the critic over one rollout batch.

Mini-batches are optimizer steps; micro-batches accumulate gradients. Each
micro-batch's loss is weighted by its share of the mini-batch's tokens (token
modes) or sequences (sequence modes), so the accumulated gradient equals the
gradient of the whole mini-batch's loss exactly, whatever the micro size. The
same weighting with global counts makes N data-parallel workers match one: every
rank holds the whole batch, takes its shard of each mini-batch
(`trainer.training.data_parallel`), and the metric sums are all-reduced at the end.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from trainer.algorithms.aggregation import aggregate_loss, aggregation, live_rows
from trainer.algorithms.kl import kl_penalty
from trainer.algorithms.policy_loss import (
    POLICY_LOSSES,
    PolicyLossInputs,
    active_policy_loss,
    effective_loss_agg_mode,
    zero_advantage_rows_matter,
)
from trainer.algorithms.value import value_loss
from trainer.config.algorithm_section import RolloutCorrectionConfig
from trainer.config.schema import ActorConfig, CriticConfig, LossAggMode
from trainer.training.batch import RolloutBatch
from trainer.training.data_parallel import (
    SINGLE_PROCESS,
    DataGroup,
    MetricSums,
    MicroBatch,
    full_tensor,
    micro_batches,
    reduce_metric_sums,
)
from trainer.training.logprobs import response_token_stats


def micro_weight(
    mask: Tensor, mini_mask_total: Tensor, mini_rows: Tensor, mode: LossAggMode
) -> Tensor:
    """Share of a micro-batch in its mini-batch's loss under the aggregation mode: its
    valid tokens, or its rows holding a valid token (`mini_rows` counts those)."""
    if aggregation(mode).weighs_by_tokens:
        return mask.sum() / mini_mask_total.clamp(min=1)
    return live_rows(mask) / mini_rows.clamp(min=1)


def iterate_minibatches(
    group_index: Tensor, mini_batch_size: int, epochs: int, generator: torch.Generator
) -> Iterator[Tensor]:
    """Row indices of each mini-batch, whole groups at a time.

    Every epoch shuffles the groups (seeded), not the rows: the rows of a group stay
    next to each other, as in verl, whose mini-batch size counts prompts. Micro-batches
    cut from a mini-batch then hold whole groups, so shared-prompt packing scores each
    prompt once per batch instead of once per micro-batch that drew one of its rows.
    """
    groups, row_group = torch.unique(group_index, return_inverse=True)
    for _ in range(epochs):
        slot = torch.empty_like(groups)  # each group's place in this epoch's order
        slot[torch.randperm(len(groups), generator=generator)] = torch.arange(len(groups))
        order = torch.argsort(slot[row_group], stable=True)  # rows of a group in row order
        for start in range(0, len(order), mini_batch_size):
            yield order[start : start + mini_batch_size]


def _add(sums: MetricSums, key: str, value: Tensor | float, weight: Tensor | float = 1.0) -> None:
    """Add a metric's weighted value without reading it: tensors stay on the device, in
    float64 (the sums of many micro-batches), until `reduce_metric_sums` reads them all."""
    if isinstance(value, Tensor):
        value = value.detach().double()
    if isinstance(weight, Tensor):
        weight = weight.detach().double()
    entry = sums.setdefault(key, [0.0, 0.0])
    entry[0] = entry[0] + value * weight
    entry[1] = entry[1] + weight


def _means(sums: dict[str, list[float]]) -> dict[str, float]:
    return {k: (v[0] / v[1] if v[1] else 0.0) for k, v in sums.items()}


# A role's gradient accumulation over one mini-batch: (mini-batch, its response tokens,
# its rows, the metric sums). The counts are the whole mini-batch's, so each micro-batch's
# loss takes its share of them.
Accumulate = Callable[[RolloutBatch, Tensor, Tensor, MetricSums], None]


@dataclass(frozen=True)
class PpoPasses:
    """The skeleton the actor's and the critic's updates share: `epochs` passes over the
    batch in mini-batches of whole groups, each one optimizer step (zeroed gradients, the
    role's accumulation, clipping, a step only when the gradient norm is finite); the
    metric means are all-reduced over the data-parallel group."""

    role: str  # the metrics' prefix: actor, critic
    epochs: int
    mini_batch_rows: int
    grad_clip: float

    def run(
        self,
        module: nn.Module,
        optimizer: torch.optim.Optimizer,
        batch: RolloutBatch,
        generator: torch.Generator,
        group: DataGroup,
        accumulate: Accumulate,
    ) -> dict[str, float]:
        sums: MetricSums = defaultdict(lambda: [0.0, 0.0])
        module.train()
        for rows in iterate_minibatches(
            batch.group_index.cpu(), self.mini_batch_rows, self.epochs, generator
        ):
            mini = batch.select(rows)  # the whole mini-batch: its counts are global ones
            mask_total = mini.response_mask.sum()
            row_total = live_rows(mini.response_mask)
            optimizer.zero_grad(set_to_none=True)
            accumulate(mini, mask_total, row_total, sums)
            grad_norm = full_tensor(
                torch.nn.utils.clip_grad_norm_(module.parameters(), self.grad_clip)
            )
            if torch.isfinite(grad_norm):
                optimizer.step()
            _add(sums, f"{self.role}/grad_norm", grad_norm)
        metrics = _means(reduce_metric_sums(sums, group))
        metrics[f"{self.role}/lr"] = optimizer.param_groups[0]["lr"]
        return metrics


def rows_without_gradient(batch: RolloutBatch, cfg: ActorConfig) -> Tensor:
    """(B,) bool: rows whose share of the actor's loss has a zero gradient.

    Most policy losses are the advantage times a function of the ratio, so a row whose
    every advantage is zero (a GRPO group whose samples all scored the same) contributes
    zero, and so does its gradient; only an entropy bonus, a KL loss or one of the losses
    `zero_advantage_rows_matter` names would reach it."""
    assert batch.advantages is not None
    if (
        not cfg.skip_zero_advantage_backward
        or cfg.entropy_coeff > 0
        or cfg.use_kl_loss
        or zero_advantage_rows_matter(cfg.policy_loss)
    ):
        return torch.zeros(batch.size, dtype=torch.bool, device=batch.advantages.device)
    return ((batch.advantages * batch.response_mask) == 0).all(dim=-1)


def update_actor(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    batch: RolloutBatch,
    cfg: ActorConfig,
    temperature: float,
    mini_batch_rows: int,
    norm_constant: float,
    generator: torch.Generator,
    group: DataGroup = SINGLE_PROCESS,
    rollout_correction: RolloutCorrectionConfig | None = None,
) -> dict[str, float]:
    """One PPO pass (cfg.ppo_epochs x mini-batches) over the batch; returns actor/* means.
    `rollout_correction` is read by the bypass_mode loss only.

    Rows without a gradient (`rows_without_gradient`) are scored without autograd, after
    the others: the weights use the whole mini-batch's counts, so the gradient and the
    metrics are the whole mini-batch's while the backward skips rows that add zero."""
    assert batch.advantages is not None

    def accumulate(
        mini: RolloutBatch, mask_total: Tensor, row_total: Tensor, sums: MetricSums
    ) -> None:
        idle = rows_without_gradient(mini, cfg).cpu()
        # Every rank holds the whole batch, so all split it alike. With no row to learn
        # from, run the ordinary pass: the optimizer then steps on zero gradients.
        parts = [(mini, True)]
        if idle.any() and not idle.all():
            parts = [(mini.select(torch.nonzero(~idle).squeeze(1)), True)]
            parts.append((mini.select(torch.nonzero(idle).squeeze(1)), False))
        for part_batch, learn in parts:
            with torch.enable_grad() if learn else torch.no_grad():
                for part in micro_batches(
                    part_batch,
                    group,
                    cfg.micro_batch_size,
                    cfg.max_tokens_per_micro_batch,
                    cfg.pack_shared_prompts,
                ):
                    _actor_micro_batch(
                        model,
                        part,
                        cfg,
                        temperature,
                        norm_constant,
                        mask_total,
                        row_total,
                        sums,
                        learn,
                        rollout_correction=rollout_correction,
                    )

    passes = PpoPasses("actor", cfg.ppo_epochs, mini_batch_rows, cfg.optim.grad_clip)
    return passes.run(model, optimizer, batch, generator, group, accumulate)


def _actor_micro_batch(
    model: nn.Module,
    part: MicroBatch,
    cfg: ActorConfig,
    temperature: float,
    norm_constant: float,
    mask_total: Tensor,
    row_total: Tensor,
    sums: MetricSums,
    learn: bool,
    rollout_correction: RolloutCorrectionConfig | None = None,
) -> None:
    """The actor's loss on one micro-batch, weighted by its share of the mini-batch;
    back-propagated when `learn`, and added to the metric sums either way."""
    micro = part.batch
    stats = response_token_stats(
        model,
        micro,
        temperature,
        with_entropy=True,  # always reported; the bonus uses it when entropy_coeff > 0
        packed=cfg.pack_shared_prompts,
        shared_prefix=cfg.shared_prefix_scoring,
        entropy_grad=learn and cfg.entropy_coeff > 0,  # else it is only reported
    )
    # One optimizer step per batch makes the rollout policy the current one:
    # old log-probs are then this forward's values (ratio 1), no extra pass.
    old = micro.old_logprobs if micro.old_logprobs is not None else stats.logprobs
    bypass = rollout_correction is not None and rollout_correction.bypass_mode
    loss_name = active_policy_loss(cfg.policy_loss, bypass)
    pg = POLICY_LOSSES[loss_name](
        PolicyLossInputs(
            logprobs=stats.logprobs,
            old_logprobs=old.detach(),
            advantages=micro.advantages,  # type: ignore[arg-type]
            response_mask=micro.response_mask,
            clip_ratio_low=cfg.clip_ratio_low,
            clip_ratio_high=cfg.clip_ratio_high,
            clip_ratio_c=cfg.clip_ratio_c,
            loss_agg_mode=cfg.loss_agg_mode,
            norm_constant=norm_constant,
            options=cfg.policy_loss_options,
            rollout_is_weights=micro.rollout_is_weights,
            rollout_correction=rollout_correction,
            # clip_cov's random pick draws from torch's global generator, as verl: the
            # mini-batch generator must stay identical on every data-parallel rank.
        )
    )
    loss = pg.loss
    assert stats.entropy is not None
    entropy = aggregate_loss(stats.entropy, micro.response_mask, cfg.loss_agg_mode, norm_constant)
    if cfg.entropy_coeff > 0:
        loss = loss - cfg.entropy_coeff * entropy
    if cfg.use_kl_loss:
        assert micro.ref_logprobs is not None, "use_kl_loss needs reference log-probs"
        kl = kl_penalty(stats.logprobs, micro.ref_logprobs, cfg.kl_loss_type)
        kl_loss = aggregate_loss(kl, micro.response_mask, cfg.loss_agg_mode, norm_constant)
        loss = loss + cfg.kl_loss_coef * kl_loss
    # A dummy micro-batch (active 0) only keeps data-parallel ranks in step.
    # sapo and geo_mean average over rows whatever loss_agg_mode says: weigh them so.
    mode = effective_loss_agg_mode(loss_name, cfg.loss_agg_mode)
    weight = part.active * micro_weight(micro.response_mask, mask_total, row_total, mode)
    if learn:
        (loss * weight).backward()
    w = weight.detach()
    if cfg.use_kl_loss:  # weighted like the loss, so any micro split gives one mean
        _add(sums, "actor/kl_loss", kl_loss, w)
    _add(sums, "actor/pg_loss", pg.loss, w)
    _add(sums, "actor/pg_clipfrac", pg.clipfrac, w)
    _add(sums, "actor/pg_clipfrac_lower", pg.clipfrac_lower, w)
    _add(sums, "actor/ppo_kl", pg.ppo_kl, w)
    _add(sums, "actor/entropy", entropy, w)
    for key, value in pg.metrics.items():
        _add(sums, key, value, w)


def update_critic(
    critic: nn.Module,
    optimizer: torch.optim.Optimizer,
    batch: RolloutBatch,
    cfg: CriticConfig,
    micro_batch_size: int,
    mini_batch_rows: int,
    generator: torch.Generator,
    group: DataGroup = SINGLE_PROCESS,
    max_tokens_per_micro_batch: int | None = None,
) -> dict[str, float]:
    """Clipped value regression towards the GAE returns."""
    assert batch.values is not None and batch.returns is not None
    mode: LossAggMode = cfg.loss_agg_mode

    def accumulate(
        mini: RolloutBatch, mask_total: Tensor, row_total: Tensor, sums: MetricSums
    ) -> None:
        for part in micro_batches(
            mini,
            group,
            micro_batch_size,
            max_tokens_per_micro_batch,
            keep_response_width=aggregation(mode).needs_response_width,
        ):
            micro = part.batch
            assert micro.values is not None and micro.returns is not None
            vpreds = critic_values(critic, micro)
            loss, clipfrac = value_loss(
                vpreds, micro.values, micro.returns, micro.response_mask, cfg.cliprange_value, mode
            )
            weight = part.active * micro_weight(micro.response_mask, mask_total, row_total, mode)
            (loss * weight).backward()
            _add(sums, "critic/vf_loss", loss, weight)
            _add(sums, "critic/vf_clipfrac", clipfrac, weight)

    passes = PpoPasses("critic", cfg.ppo_epochs, mini_batch_rows, cfg.optim.grad_clip)
    return passes.run(critic, optimizer, batch, generator, group, accumulate)


def critic_values(critic: nn.Module, batch: RolloutBatch) -> Tensor:
    """Value of the state before each response token: (B, R)."""
    values = critic(
        input_ids=batch.input_ids,
        attention_mask=batch.attention_mask,
        position_ids=batch.position_ids,
    )  # (B, P+R)
    width_r = batch.response_width
    return values[:, -width_r - 1 : -1] * batch.response_mask

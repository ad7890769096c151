"""One training step: rollout, reward, log-probs, advantages, updates, metrics.

Read it top to bottom; each phase is timed under verl's `timing_s/*` names. The
models are reached through `roles` (trainer.training.roles): modules of this process, or the
FSDP2 worker groups of the distributed trainer; this step is the same for both.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from trainer.algorithms.advantages import (
    ADVANTAGE_ESTIMATORS,
    AdvantageInputs,
    scores_to_token_rewards,
)
from trainer.algorithms.dapo import groups_with_reward_spread, overlong_penalty
from trainer.algorithms.kl import apply_kl_in_reward
from trainer.config.estimators import ESTIMATOR_TRAITS
from trainer.config.schema import RunConfig
from trainer.env.episodes import EpisodeRunner, episode_metrics
from trainer.reporting import startup
from trainer.rewards.contract import error_rate
from trainer.rollout.collect import PromptItem, Sample, generate, score
from trainer.rollout.engine import SamplingParams
from trainer.training.algorithm_inputs import (
    apply_rollout_correction,
    greedy_baselines,
    pf_ppo_resample,
    rollout_logprobs,
)
from trainer.training.batch import RolloutBatch, build_batch
from trainer.training.metrics import rollout_metrics, tensor_stats
from trainer.training.roles import ModelRoles, StepContext
from trainer.training.step_hooks import around_rollout


class RewardErrorRateExceeded(RuntimeError):
    """Too many reward calls failed in one batch: the reward function is broken."""


@dataclass
class StepResult:
    metrics: dict[str, float]
    samples: list[Sample]
    advantages: list[float]  # per-sample scalar advantage (first response token)
    token_advantages: torch.Tensor | None = None  # (B, R), rows as `samples`: rollout viewer


@contextmanager
def timed(metrics: dict[str, float], name: str) -> Iterator[None]:
    started = time.perf_counter()
    yield
    metrics[f"timing_s/{name}"] = metrics.get(f"timing_s/{name}", 0.0) + (
        time.perf_counter() - started
    )


def rollout_with_dynamic_sampling(
    state: StepContext,
    prompts: list[PromptItem],
    step: int,
    metrics: dict[str, float],
    episodes: EpisodeRunner | None = None,
    next_prompts: Callable[[], list[PromptItem]] | None = None,
) -> list[Sample]:
    """Generate and score. With DAPO dynamic sampling, groups whose rewards are all
    equal carry no signal: drop them and draw more prompts (`next_prompts`, from the data
    loop) until the batch holds as many groups as asked for, or `max_gen_batches` rounds
    have run."""
    cfg = state.cfg
    dyn = cfg.algorithm.dynamic_sampling
    kept: list[Sample] = []
    kept_groups = 0
    pending = prompts
    for round_index in range(1, dyn.max_gen_batches + 1):
        sampling = sampling_params(state, step * 1000 + round_index)
        with timed(metrics, "gen"):  # multi-turn: episodes, tool calls included
            generated = (
                episodes.generate(pending, sampling)
                if episodes
                else generate(state.engine, pending, sampling)
            )
        with timed(metrics, "reward"):
            samples = score(state.scorer, generated)
        shape_overlong(state, samples)
        check_reward_errors(state, samples)
        if not dyn.enabled:
            return samples
        keep = groups_with_reward_spread(
            torch.tensor([s.score for s in samples]), torch.tensor([s.group for s in samples])
        )
        informative = sorted({s.group for s, k in zip(samples, keep.tolist(), strict=True) if k})
        for group in informative[: len(prompts) - kept_groups]:
            for s in samples:
                if s.group == group:
                    s.group = kept_groups  # renumber so groups stay unique across rounds
                    kept.append(s)
            kept_groups += 1
        metrics["dapo/num_gen_batches"] = float(round_index)
        if kept_groups >= len(prompts):
            break
        if next_prompts is None:
            raise ValueError("DAPO dynamic sampling draws more prompts: pass next_prompts")
        pending = next_prompts()
    metrics["dapo/kept_groups"] = float(kept_groups)
    # Every group had zero spread: keep the last round (its advantages are zero).
    return kept or samples


def check_reward_errors(state: StepContext, samples: list[Sample]) -> None:
    limit = state.cfg.reward.max_error_rate
    rate = error_rate([s.reward for s in samples])
    if rate > limit:
        first = next(s.reward.error for s in samples if s.reward.error)
        raise RewardErrorRateExceeded(
            f"{rate:.0%} of reward calls in this batch failed (reward.max_error_rate="
            f"{limit}); first error: {first}"
        )


def sampling_params(state: StepContext, salt: int) -> SamplingParams:
    r = state.cfg.rollout
    return SamplingParams(
        n=r.n,
        temperature=r.temperature,
        top_p=r.top_p,
        top_k=r.top_k,
        max_new_tokens=r.max_new_tokens,
        stop=tuple(r.stop),
        # Derived from (seed, step): a resumed run samples exactly what it would have.
        seed=state.cfg.trainer.seed * 1_000_003 + salt,
    )


def response_limit(cfg: RunConfig) -> int:
    """The longest response a rollout can return: one message, or a multi-turn episode."""
    mt = cfg.rollout.multi_turn
    return mt.max_episode_tokens if mt.enabled else cfg.rollout.max_new_tokens


def shape_overlong(state: StepContext, samples: list[Sample]) -> None:
    over = state.cfg.algorithm.overlong
    if not over.enabled or not samples:
        return
    lengths = torch.tensor([len(s.completion.token_ids) for s in samples])
    penalty = overlong_penalty(
        lengths, response_limit(state.cfg), over.buffer_len, over.penalty_factor
    )
    for s, p in zip(samples, penalty.tolist(), strict=True):
        s.score += p


def to_batch(state: StepContext, samples: list[Sample]) -> RolloutBatch:
    batch = build_batch(
        prompts=[s.prompt.prompt_ids for s in samples],
        responses=[s.completion.token_ids for s in samples],
        group_index=[s.group for s in samples],
        scores=[s.score for s in samples],
        pad_token_id=state.pad_token_id,
        response_masks=[s.completion.response_mask for s in samples],
    )
    batch.sample_ids = torch.arange(batch.size)
    for hook in state.step_hooks:
        hook.batch_built([s.completion for s in samples])
    return batch


def train_step(
    state: StepContext,
    roles: ModelRoles,
    prompts: list[PromptItem],
    step: int,
    episodes: EpisodeRunner | None = None,
    next_prompts: Callable[[], list[PromptItem]] | None = None,
) -> StepResult:
    """One step; `episodes` rolls out multi-turn episodes instead of single responses;
    `next_prompts` draws more prompts for DAPO dynamic sampling."""
    cfg = state.cfg
    metrics: dict[str, float] = {}
    started = time.perf_counter()
    with around_rollout(state.step_hooks):
        samples = rollout_with_dynamic_sampling(
            state, prompts, step, metrics, episodes, next_prompts
        )
    startup.mark("first_rollout")  # the process's first (the studio's startup timeline)
    traits = ESTIMATOR_TRAITS[cfg.algorithm.adv_estimator]
    correction = cfg.algorithm.rollout_correction
    batch = to_batch(state, samples)
    if correction.enabled:
        batch.rollout_logprobs = rollout_logprobs(samples, batch.response_width)
    if traits.needs_greedy_baseline:  # ReMax: decoded before the engine sleeps
        with timed(metrics, "gen"):
            batch.reward_baselines = greedy_baselines(
                state,
                samples,
                sampling_params(state, step * 1000),
                lambda s: shape_overlong(state, s),
            )
    batch = batch.to(state.device)
    temperature = cfg.rollout.temperature or 1.0
    mini_rows = cfg.actor.ppo_mini_batch_size * cfg.rollout.n
    single_update = cfg.actor.ppo_epochs == 1 and mini_rows >= batch.size
    state.engine.sleep()

    if correction.bypass_mode:  # the engine's log-probs are the old policy's (verl)
        batch.old_logprobs = batch.rollout_logprobs
    elif (
        not single_update
        or cfg.algorithm.use_kl_in_reward
        or correction.enabled
        or traits.needs_token_probabilities
    ):
        with timed(metrics, "old_log_prob"):
            batch.old_logprobs = roles.actor_logprobs(batch, temperature)
    if traits.needs_token_probabilities:  # the optimal token baselines' path variance
        with timed(metrics, "old_log_prob"):
            batch.sum_pi_squared = roles.actor_sum_pi_squared(batch, temperature)
    if cfg.needs_reference_model:
        with timed(metrics, "ref"):
            batch.ref_logprobs = roles.ref_logprobs(batch, temperature)
    if cfg.needs_critic:
        with timed(metrics, "values"):
            batch.values = roles.critic_values(batch)

    with timed(metrics, "adv"):
        if correction.enabled and not correction.bypass_mode:
            apply_rollout_correction(batch, cfg, metrics)
        token_rewards = scores_to_token_rewards(batch.scores, batch.response_mask)
        if cfg.algorithm.use_kl_in_reward:
            assert batch.old_logprobs is not None and batch.ref_logprobs is not None
            token_rewards, mean_kl = apply_kl_in_reward(
                token_rewards,
                batch.old_logprobs,
                batch.ref_logprobs,
                batch.response_mask,
                state.kl_ctrl.value,
                cfg.algorithm.kl_penalty,
            )
            metrics["actor/reward_kl_penalty"] = mean_kl
            metrics["actor/reward_kl_penalty_coeff"] = state.kl_ctrl.value
            state.kl_ctrl.update(mean_kl, n_steps=len(prompts))
        batch.token_rewards = token_rewards
        advantages, returns = ADVANTAGE_ESTIMATORS[cfg.algorithm.adv_estimator](
            AdvantageInputs(
                token_rewards=token_rewards,
                response_mask=batch.response_mask,
                group_index=batch.group_index,
                values=batch.values,
                gamma=cfg.algorithm.gamma,
                lam=cfg.algorithm.lam,
                norm_by_std=cfg.algorithm.norm_adv_by_std_in_grpo,
                reward_baselines=batch.reward_baselines,
                old_logprobs=batch.old_logprobs,
                sum_pi_squared=batch.sum_pi_squared,
                rollout_is_weights=batch.rollout_is_weights,
            )
        )
        batch.advantages, batch.returns = advantages, returns
    reported = batch  # rows as `samples`, for the metrics and the rollout viewer
    if cfg.algorithm.use_pf_ppo:
        batch = pf_ppo_resample(batch, cfg, step)

    norm_constant = float(response_limit(cfg))
    if cfg.needs_critic:
        with timed(metrics, "update_critic"):
            metrics |= roles.update_critic(batch, mini_rows, state.update_generator)
    with timed(metrics, "update_actor"):
        metrics |= roles.update_actor(
            batch, temperature, mini_rows, norm_constant, state.update_generator
        )
    for hook in state.step_hooks:
        hook.update_done()  # the weights move now: nothing to reuse
    roles.step_schedulers()
    with timed(metrics, "update_weights"):
        roles.sync_rollout_weights()
        state.engine.wake()

    metrics |= rollout_metrics(samples, response_limit(cfg))
    metrics |= episode_metrics([s.completion for s in samples])
    metrics |= tensor_stats("critic/advantages", advantages, reported.response_mask)
    metrics |= tensor_stats("critic/returns", returns, reported.response_mask)
    metrics |= tensor_stats("critic/rewards", token_rewards.sum(-1))
    if reported.reward_baselines is not None:  # ReMax: the greedy responses' rewards
        metrics |= tensor_stats("critic/reward_baselines", reported.reward_baselines)
    if reported.values is not None:
        metrics |= tensor_stats("critic/values", reported.values, reported.response_mask)
    elapsed = time.perf_counter() - started
    metrics["timing_s/step"] = elapsed
    tokens = float(reported.attention_mask.sum())
    response_tokens = float(reported.response_mask.sum())
    metrics["perf/total_num_tokens"] = tokens
    metrics["perf/time_per_step"] = elapsed
    metrics["perf/throughput"] = tokens / elapsed
    metrics["perf/response_tokens_per_s"] = response_tokens / elapsed
    metrics |= state.perf_metrics(tokens, elapsed, metrics.get("timing_s/update_actor", 0.0))
    first_token_adv = advantages[:, 0].tolist()
    return StepResult(
        metrics=metrics,
        samples=samples,
        advantages=first_token_adv,
        token_advantages=advantages,
    )

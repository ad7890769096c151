"""What some algorithms need from the training step beyond scores and log-probs: ReMax's
greedy baseline, the rollout engine's log-probs and the rollout correction, PF-PPO's
resampled batch. Each is called from trainer.training.step only when the config asks."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import torch
from torch import Tensor

from trainer.algorithms.pf_ppo import pf_ppo_rows
from trainer.algorithms.rollout_correction import correct
from trainer.config.schema import RunConfig
from trainer.rollout.collect import PromptItem, Sample, generate, score
from trainer.rollout.engine import SamplingParams
from trainer.training.batch import RolloutBatch
from trainer.training.roles import StepContext


def greedy_baselines(
    state: StepContext,
    samples: list[Sample],
    sampling: SamplingParams,
    shape: Callable[[list[Sample]], None],
) -> Tensor:
    """(B,) ReMax baseline of each sample: the reward of one greedy (temperature 0)
    response to its prompt, scored and shaped like the samples (`shape`). Those responses
    only set the baseline: they are never trained on (verl 0.9.1's REMAX branch)."""
    prompts: dict[int, PromptItem] = {}
    for s in samples:
        prompts.setdefault(s.group, s.prompt)
    groups = sorted(prompts)
    greedy = dataclasses.replace(sampling, n=1, temperature=0.0)
    baselines = score(state.scorer, generate(state.engine, [prompts[g] for g in groups], greedy))
    shape(baselines)
    by_group = {groups[b.group]: b.score for b in baselines}
    return torch.tensor([by_group[s.group] for s in samples], dtype=torch.float32)


def rollout_logprobs(samples: list[Sample], width: int) -> Tensor:
    """(B, width) the engine's log-prob of each response token, 0 past the response."""
    out = torch.zeros(len(samples), width)
    for row, s in enumerate(samples):
        c = s.completion
        if len(c.logprobs) != len(c.token_ids):
            raise ValueError(
                f"rollout correction needs the engine's log-prob of every response token; "
                f"sample {row} has {len(c.logprobs)} for {len(c.token_ids)} tokens."
            )
        out[row, : len(c.logprobs)] = torch.tensor(c.logprobs, dtype=torch.float32)
    return out


def apply_rollout_correction(
    batch: RolloutBatch, cfg: RunConfig, metrics: dict[str, float]
) -> None:
    """Decoupled mode (verl): weights pi_old / pi_rollout go to the loss (and the optimal
    token baselines), rejected tokens leave the response mask before the advantages."""
    correction = cfg.algorithm.rollout_correction
    assert batch.old_logprobs is not None and batch.rollout_logprobs is not None
    fix = correct(batch.old_logprobs, batch.rollout_logprobs, batch.response_mask, correction)
    batch.response_mask = fix.response_mask
    batch.rollout_is_weights = fix.weights
    metrics |= fix.metrics


def pf_ppo_resample(batch: RolloutBatch, cfg: RunConfig, step: int) -> RolloutBatch:
    """The batch drawn again, with replacement, by PF-PPO weights of the scores; seeded by
    (seed, step) so a resumed run draws the same rows."""
    pf = cfg.algorithm.pf_ppo
    generator = torch.Generator().manual_seed(cfg.trainer.seed * 1_000_003 + 7 * step + 1)
    assert batch.token_rewards is not None
    # verl weighs by token_level_scores (before any KL-in-reward penalty): the scores.
    rows = pf_ppo_rows(batch.scores.cpu(), pf.reweight_method, pf.weight_pow, generator)
    return batch.select(rows.to(batch.scores.device))

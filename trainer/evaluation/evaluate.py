"""An evaluation: each model of `evaluation.models` answers the validation prompts, the
run's reward scores every response, and every response is reported with its score.

Read top to bottom: `evaluate` loads the prompts (per tokenizer) and the reward scorer
once, then for each model in turn loads it (a Hugging Face folder, or a trainer checkpoint
on the base model its meta names), generates `evaluation.k` responses per prompt with the
rollout engine training uses (`HFEngine`), scores them in the reward sandbox, and reports
each batch's samples (split `eval`, step = the model's position from 1) as it goes, then
the model's scores (trainer.evaluation.scores) as metrics at its step. At step 0 it reports how
many responses the whole evaluation will give (`eval/total_responses`), so a reader of the
stored samples knows how far it is.

A studio-launched evaluation is this code in the Ray job's process (the job is the
evaluation, like a training run's); cancelling the run stops the job.
"""

from __future__ import annotations

import gc
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch

from trainer.config.sampling import SamplingParams
from trainer.config.schema import RunConfig
from trainer.evaluation.scores import Response, by_data_source, summarise
from trainer.models.loading import load_policy, load_tokenizer, resolve_device
from trainer.models.sources import ModelSource, ModelSourceError, actor_state, resolve_model
from trainer.reporting.base import Reporter, SampleRecord
from trainer.reporting.sample_policy import to_record
from trainer.rewards.contract import RewardScorer
from trainer.rewards.resolution import (
    UnresolvedRewardError,
    describe_resolution,
    require_scorers,
)
from trainer.rollout.chunked import chunk_prompts
from trainer.rollout.collect import PromptItem, Sample, generate, score
from trainer.rollout.hf import HFEngine
from trainer.training.loop import load_prompt_items
from trainer.training.reward_sources import make_reward_scorer

log = logging.getLogger(__name__)

EVAL_SPLIT: Literal["eval"] = "eval"


class EvaluationError(Exception):
    """The evaluation can't run as configured; the message names the setting to fix."""


@dataclass(frozen=True)
class ModelResult:
    label: str
    step: int  # the model's position (from 1): the step of its samples and metrics
    metrics: dict[str, float]


def sampling_of(cfg: RunConfig) -> SamplingParams:
    e, r = cfg.evaluation, cfg.rollout
    return SamplingParams(
        n=e.k,
        temperature=0.0 if e.greedy else e.temperature,
        top_p=r.top_p,
        top_k=r.top_k,
        max_new_tokens=r.max_new_tokens,
        stop=tuple(r.stop),
        seed=cfg.trainer.seed,
    )


def _load(source: ModelSource, device: torch.device) -> torch.nn.Module:
    model = load_policy(source.base, source.dtype, device)
    if source.checkpoint is not None:
        try:
            model.load_state_dict(actor_state(source.checkpoint / "actor.pt", device))
        except RuntimeError as exc:  # e.g. a LoRA run's adapters: other parameter names
            raise EvaluationError(
                f"the checkpoint {source.checkpoint} does not fit its base model "
                f"{source.base}: {str(exc).splitlines()[0][:300]}"
            ) from None
    model.eval()
    return model


def chosen_prompts(items: list[PromptItem], ids: list[str]) -> list[PromptItem]:
    """The prompts named by `ids` (in the data's order); every id must name exactly one,
    so an evaluation never answers a prompt other than the one asked for."""
    if not ids:
        return items
    for uid in ids:
        found = sum(1 for item in items if item.uid == uid)
        if found != 1:
            raise EvaluationError(
                f"evaluation.prompt_ids: {uid!r} names {found} prompts of data.val_files, "
                "expected 1 (an id is `<file index>:<row index>`; a row index repeats when the "
                "data's extra_info.index does, and a prompt longer than "
                "data.max_prompt_length is left out)"
            )
    wanted = set(ids)
    return [item for item in items if item.uid in wanted]


def _prompts(cfg: RunConfig, base: Path, cache: dict[Path, list[PromptItem]]) -> list[PromptItem]:
    """The evaluation prompts, templated and tokenized by the tokenizer in `base`."""
    if base not in cache:
        items, _ = load_prompt_items(cfg.data.val_files, load_tokenizer(base), cfg.data)
        items = chosen_prompts(items, cfg.evaluation.prompt_ids)
        cache[base] = items[: cfg.evaluation.max_prompts] if cfg.evaluation.max_prompts else items
    return cache[base]


def _records(samples: list[Sample], step: int) -> list[SampleRecord]:
    return [to_record(s, step, EVAL_SPLIT) for s in samples]


def _scores(samples: list[Sample]) -> list[Response]:
    return [
        Response(
            prompt=s.prompt.uid,
            data_source=s.prompt.data_source,
            score=s.score,
            length=len(s.completion.token_ids),
            error=bool(s.reward.error),
        )
        for s in samples
    ]


def evaluate_model(
    cfg: RunConfig,
    step: int,
    source: ModelSource,
    items: list[PromptItem],
    scorer: RewardScorer,
    reporter: Reporter,
    device: torch.device,
) -> list[Response]:
    """Generate and score every prompt with one model, reporting each batch's samples."""
    model = _load(source, device)
    tokenizer = load_tokenizer(source.base)
    engine = HFEngine(model, tokenizer, device, max_batch_size=cfg.rollout.micro_batch_size)
    sampling = sampling_of(cfg)
    responses: list[Response] = []
    # The engine's batch filled, as training's validation fills it (trainer.rollout.chunked).
    size = cfg.evaluation.batch_size or chunk_prompts(
        cfg.rollout.micro_batch_size, cfg.evaluation.k
    )
    with torch.no_grad():
        for start in range(0, len(items), size):
            chunk = items[start : start + size]
            # Each batch its own seed, so a repeated evaluation repeats, batch by batch.
            seeded = SamplingParams(**{**sampling.__dict__, "seed": (sampling.seed or 0) + start})
            samples = score(scorer, generate(engine, chunk, seeded))
            reporter.samples(step, _records(samples, step))
            responses += _scores(samples)
    del engine, model
    gc.collect()
    return responses


def evaluate(cfg: RunConfig, reporter: Reporter) -> list[ModelResult]:
    """Evaluate every model of `cfg.evaluation.models` on `cfg.data.val_files`."""
    e = cfg.evaluation
    if not e.models:
        raise EvaluationError("evaluation.models is empty: name at least one model to evaluate")
    if not cfg.data.val_files:
        raise EvaluationError("data.val_files is empty: an evaluation needs prompts to answer")
    try:
        sources = [resolve_model(m.path) for m in e.models]
    except ModelSourceError as exc:
        raise EvaluationError(str(exc)) from None
    torch.manual_seed(cfg.trainer.seed)
    device = resolve_device(cfg.resources.device)
    reporter.status("running")
    cache: dict[Path, list[PromptItem]] = {}
    prompts = _prompts(cfg, sources[0].base, cache)
    if not prompts:
        raise EvaluationError(
            "no usable evaluation prompts (every one is longer than "
            f"data.max_prompt_length={cfg.data.max_prompt_length} tokens, or the data is empty)"
        )
    try:
        resolved = require_scorers(
            cfg.reward.function,
            (p.data_source for p in prompts),
            "the evaluation prompts",
            reward_models=len(cfg.reward.model_sections()),
        )
    except UnresolvedRewardError as exc:
        raise EvaluationError(str(exc)) from None
    if resolved:
        reporter.log("info", describe_resolution(resolved))
    total = len(prompts) * e.k * len(sources)
    reporter.metrics(0, {"eval/total_responses": float(total)})
    reporter.log(
        "info",
        f"evaluating {len(sources)} model(s) on {len(prompts)} prompts, k={e.k}, "
        + ("greedy" if e.greedy else f"temperature {e.temperature}"),
    )
    scorer = make_reward_scorer(cfg.reward, device)
    results: list[ModelResult] = []
    try:
        for step, (model, source) in enumerate(zip(e.models, sources, strict=True), start=1):
            started = time.perf_counter()
            items = _prompts(cfg, source.base, cache)
            responses = evaluate_model(cfg, step, source, items, scorer, reporter, device)
            metrics = _metrics(responses, cfg)
            metrics["timing_s/eval"] = time.perf_counter() - started
            reporter.metrics(step, metrics)
            reporter.progress(step, len(sources))
            reporter.log("info", f"{model.label}: {_headline(metrics, e.k)}")
            results.append(ModelResult(model.label, step, metrics))
    finally:
        scorer.close()
    reporter.status("succeeded")
    return results


def _metrics(responses: list[Response], cfg: RunConfig) -> dict[str, float]:
    e = cfg.evaluation
    overall = summarise(responses, e.k, e.pass_threshold)
    metrics = overall.as_metrics("eval/") if overall else {}
    for source, scores in by_data_source(responses, e.k, e.pass_threshold).items():
        metrics |= scores.as_metrics(f"eval/{source}/")
    return metrics


def _headline(metrics: dict[str, Any], k: int) -> str:
    keys = ("eval/score/mean", f"eval/pass@{k}", f"eval/mean@{k}", "eval/error_rate")
    return ", ".join(f"{key[5:]} {metrics[key]:.3f}" for key in keys if key in metrics)

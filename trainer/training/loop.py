"""The training loop: data, steps, validation, checkpoints, reporting."""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from trainer.config.estimators import ESTIMATOR_TRAITS
from trainer.config.schema import DataConfig, RunConfig
from trainer.data.formats import read_prompt_records
from trainer.data.prompts import encode_prompts
from trainer.data.remote import local_copy
from trainer.data.sampler import ResumableSampler
from trainer.env.builtin import make_episode_runner
from trainer.env.chat import check_template_renders_tools
from trainer.reporting import startup
from trainer.reporting.base import Reporter
from trainer.reporting.sample_policy import (
    SamplePolicy,
    TokenDecoder,
    train_records,
    val_records,
)
from trainer.rewards.contract import RewardScorer
from trainer.rewards.resolution import describe_resolution, require_scorers
from trainer.rewards.sandbox.scorers import make_scorer
from trainer.rollout.collect import PromptItem, Sample, generate, score
from trainer.rollout.engine import SamplingParams
from trainer.training.checkpoint import (
    export_hf,
    latest_checkpoint,
    load_checkpoint,
    prune_checkpoints,
    save_checkpoint,
)
from trainer.training.reward_error_log import RewardErrorLog
from trainer.training.roles import Runtime, StepContext, local_runtime
from trainer.training.step import train_step

log = logging.getLogger(__name__)


def load_prompt_items(
    files: list[str], tokenizer: Any, cfg: DataConfig, tools: Sequence[dict[str, Any]] = ()
) -> tuple[list[PromptItem], int]:
    """Read, template and tokenize prompts (with a multi-turn environment's `tools`);
    returns (items, prompts filtered as too long)."""
    items: list[PromptItem] = []
    filtered_total = 0
    for file_index, path in enumerate(files):
        # A studio-launched run names its dataset by URL (fetched with the run token).
        records = read_prompt_records(local_copy(path), cfg)
        encoded, filtered = encode_prompts(records, tokenizer, cfg, tools)
        filtered_total += filtered
        items += [
            PromptItem(
                uid=f"{file_index}:{e.record.index}",
                prompt_ids=list(e.prompt_ids),
                prompt_text=e.prompt_text,
                data_source=e.record.data_source,
                ground_truth=e.record.ground_truth,
                extra_info=dict(e.record.extra_info),
                row=e.record.position,
            )
            for e in encoded
        ]
    return items, filtered_total


INPROCESS_WARNING = (
    "reward.executor='inprocess': the reward code runs inside the trainer process, "
    "unsandboxed (no time, memory, file or network limits); use it for trusted code only"
)


def one_response_group_note(cfg: RunConfig) -> str:
    """The warning for an estimator that compares responses within a group run with one
    response per prompt (accepted, as verl accepts it); "" otherwise."""
    estimator = cfg.algorithm.adv_estimator
    if cfg.rollout.n > 1 or not ESTIMATOR_TRAITS[estimator].compares_within_group:
        return ""
    return (
        f"algorithm.adv_estimator={estimator} with rollout.n=1: each group is one response, "
        "whose advantage is its own score (verl's group of one: mean 0, std 1); there is no "
        "baseline, so set rollout.n >= 2 for a group-relative advantage"
    )


class Trainer:
    def __init__(self, cfg: RunConfig, reporter: Reporter, runtime: Runtime | None = None) -> None:
        self.cfg = cfg
        self.reporter = reporter
        # Models in this process unless given (distributed worker groups: trainer.training.roles).
        runtime = runtime or local_runtime(cfg)
        self.state: StepContext = runtime.state
        self.roles = runtime.roles
        if cfg.reward.executor == "inprocess":
            reporter.log("warning", INPROCESS_WARNING)
        if note := one_response_group_note(cfg):
            reporter.log("warning", note)
        # Multi-turn (rollout.multi_turn): episodes with tools run in the sandbox.
        self.episodes = make_episode_runner(cfg, self.state.engine, self.state.tokenizer)
        env_tools = self.episodes.env.tools if self.episodes else ()
        tools = [t.as_chat_template_tool() for t in env_tools]
        check_template_renders_tools(self.state.tokenizer, tools)
        self.train_items, filtered = load_prompt_items(
            cfg.data.train_files, self.state.tokenizer, cfg.data, tools
        )
        if filtered:
            reporter.log(
                "warning",
                f"{filtered} training prompts are longer than data.max_prompt_length="
                f"{cfg.data.max_prompt_length} tokens and were left out",
            )
        if len(self.train_items) < cfg.data.train_batch_size:
            raise ValueError(
                f"only {len(self.train_items)} usable training prompts, fewer than "
                f"data.train_batch_size={cfg.data.train_batch_size}"
            )
        self.val_items: list[PromptItem] = []
        if cfg.data.val_files:
            self.val_items, _ = load_prompt_items(
                cfg.data.val_files, self.state.tokenizer, cfg.data, tools
            )
            self.val_items = self.val_items[: cfg.data.max_val_samples]
        resolved = require_scorers(
            cfg.reward.function,
            (item.data_source for item in [*self.train_items, *self.val_items]),
            "the training and validation rows",
            reward_models=len(cfg.reward.model_sections()),
        )
        if resolved:
            reporter.log("info", describe_resolution(resolved))
        self.sampler = ResumableSampler(
            num_items=len(self.train_items),
            batch_size=cfg.data.train_batch_size,
            shuffle=cfg.data.shuffle,
            seed=cfg.trainer.seed,
        )
        self.total_steps = cfg.trainer.total_steps or (
            self.sampler.steps_per_epoch * cfg.trainer.total_epochs
        )
        self.roles.set_schedule_length(self.total_steps)
        self.step = 0
        self.reward_errors = RewardErrorLog(cfg.reward.max_error_rate)
        self.sample_policy = SamplePolicy.from_config(cfg)
        self.decoder = cast(TokenDecoder, self.state.tokenizer)
        # Validation scored by one named built-in, whatever the run trains on (a sweep over
        # reward versions compares its trials on it); else by the run's own scorer.
        self.validation_scorer: RewardScorer | None = None
        if cfg.reward.validation_function is not None:
            self.validation_scorer = make_scorer(
                cfg.reward.model_copy(
                    update={"function": cfg.reward.validation_function, "kwargs": {}}
                )
            )
            reporter.log(
                "info",
                f"validation is scored by the built-in {cfg.reward.validation_function!r} "
                "(reward.validation_function)",
            )
        startup.mark("data_loaded")

    def next_prompts(self) -> list[PromptItem]:
        return [self.train_items[i] for i in self.sampler.next_batch()]

    def maybe_resume(self) -> None:
        if self.cfg.checkpoint.resume != "auto":
            return
        found = latest_checkpoint(self.cfg.checkpoint.dir)
        if found is None:
            return
        self.sampler.load_state_dict(load_checkpoint(self.state, self.roles, found))
        self.step = found.step
        self.reporter.log("info", f"resumed from {found.path} at step {found.step}")

    def save(self) -> None:
        ckpt = save_checkpoint(
            self.state, self.roles, self.step, self.sampler.state_dict(), self.cfg.checkpoint.dir
        )
        prune_checkpoints(self.cfg.checkpoint.dir, self.cfg.checkpoint.keep_last)
        self.reporter.checkpoint(self.step, str(ckpt.path))

    def fit(self, stop_after: int | None = None) -> dict[str, float]:
        """Train to `total_steps` (or stop early after step `stop_after`, for tests)."""
        try:
            return self._fit(stop_after)
        finally:
            if self.validation_scorer is not None:
                self.validation_scorer.close()

    def _fit(self, stop_after: int | None) -> dict[str, float]:
        self.maybe_resume()
        self.reporter.status("running")
        last: dict[str, float] = {}
        if self.cfg.trainer.val_before_train and self.step == 0 and self.val_items:
            validated = self.validate()
            startup.mark("first_validation")  # before its metrics are reported: the chart's first
            self.report(0, validated)
        self.reporter.progress(self.step, self.total_steps)
        save_every = self.cfg.checkpoint.save_every
        val_every = self.cfg.trainer.val_every
        while self.step < self.total_steps:
            result = train_step(
                self.state,
                self.roles,
                self.next_prompts(),
                self.step + 1,
                self.episodes,
                self.next_prompts,
            )
            self.step += 1
            startup.mark("first_step")
            warning = self.reward_errors.observe(self.step, result.samples)
            if warning:
                self.reporter.log("warning", warning)
            last = result.metrics
            if val_every and self.step % val_every == 0 and self.val_items:
                last |= self.validate()
            self.report(self.step, last)
            self.reporter.samples(
                self.step,
                train_records(
                    result.samples,
                    result.advantages,
                    result.token_advantages,
                    self.sample_policy,
                    self.step,
                    self.decoder,
                ),
            )
            self.reporter.progress(self.step, self.total_steps)
            if save_every and self.step % save_every == 0:
                self.save()
            if stop_after is not None and self.step >= stop_after:
                return last
        if self.val_items and not (val_every and self.step % val_every == 0):
            final = self.validate()
            self.report(self.step, final)
            last |= final
        if not save_every or self.step % save_every:
            self.save()
        if self.cfg.checkpoint.save_hf:
            export_hf(self.state, self.roles, Path(self.cfg.checkpoint.dir) / "hf")
        summary = self.reward_errors.summary()
        if summary:
            self.reporter.log("warning", summary)
        self.reporter.status("succeeded")
        return last

    def report(self, step: int, metrics: dict[str, float]) -> None:
        clean = {k: v for k, v in metrics.items() if isinstance(v, float | int)}
        self.reporter.metrics(step, {k: float(v) for k, v in clean.items()})

    def validate(self) -> dict[str, float]:
        """Greedy (by default) generations on the validation prompts: mean reward per
        data source under verl's `val-core/{data_source}/reward/mean@{n}` names, and each
        source of a combined reward under `val-aux/{data_source}/{source}/mean@{n}`."""
        r = self.cfg.rollout
        sampling = SamplingParams(
            n=r.val_n,
            temperature=r.val_temperature,
            top_p=r.top_p,
            top_k=r.top_k,
            max_new_tokens=r.max_new_tokens,
            stop=tuple(r.stop),
            seed=self.cfg.trainer.seed,
        )
        started = time.perf_counter()
        by_source: dict[str, list[float]] = defaultdict(list)
        # Each reward source of a combined reward, unweighted (verl's val-aux section).
        by_reward_source: dict[tuple[str, str], list[float]] = defaultdict(list)
        val_samples: list[Sample] = []
        for start in range(0, len(self.val_items), self.cfg.data.val_batch_size):
            chunk = self.val_items[start : start + self.cfg.data.val_batch_size]
            generated = (
                self.episodes.generate(chunk, sampling)
                if self.episodes
                else generate(self.state.engine, chunk, sampling)
            )
            samples = score(self.validation_scorer or self.state.scorer, generated)
            for s in samples:
                by_source[s.prompt.data_source].append(s.score)
                for name, value in s.reward.sources.items():
                    by_reward_source[(s.prompt.data_source, name)].append(value)
            val_samples += samples
        metrics = {
            f"val-core/{source}/reward/mean@{r.val_n}": sum(v) / len(v)
            for source, v in by_source.items()
        }
        metrics |= {
            f"val-aux/{source}/{name}/mean@{r.val_n}": sum(v) / len(v)
            for (source, name), v in by_reward_source.items()
        }
        metrics["timing_s/testing"] = time.perf_counter() - started
        self.reporter.samples(
            self.step, val_records(val_samples, self.sample_policy, self.step, self.decoder)
        )
        return metrics

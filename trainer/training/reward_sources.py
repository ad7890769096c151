"""Several reward sources combined: the reward function and the reward models.

Each source scores every response; the reward is the weighted sum of their scores.
Every source's unweighted score is kept by name (`RewardResult.sources`, charted as
`critic/score/<name>/mean`) and as a component (`reward/<name>/mean`, which the studio's
dominating-component alert watches). A response that any source failed to score is an
error result naming the source, as with a single reward function.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch

from trainer.config.schema import RewardConfig, RewardModelConfig
from trainer.rewards.contract import RewardRequest, RewardResult, RewardScorer, error_result
from trainer.rewards.sandbox.scorers import make_scorer


@dataclass
class RewardSource:
    name: str
    weight: float
    scorer: RewardScorer


class CombinedScorer:
    def __init__(self, sources: list[RewardSource]) -> None:
        names = [s.name for s in sources]
        if len(set(names)) != len(names):
            raise ValueError(f"reward sources need distinct names, got {names}")
        self.sources = sources

    def score_batch(self, requests: list[RewardRequest]) -> list[RewardResult]:
        per_source = [s.scorer.score_batch(requests) for s in self.sources]
        combined: list[RewardResult] = []
        for row in zip(*per_source, strict=True):
            failed = [(s.name, r.error) for s, r in zip(self.sources, row, strict=True) if r.error]
            elapsed = sum(r.elapsed_ms for r in row)
            if failed:
                name, error = failed[0]
                combined.append(error_result(f"{name}: {error}", elapsed_ms=elapsed))
                continue
            scores = {s.name: r.score for s, r in zip(self.sources, row, strict=True)}
            components: dict[str, float] = {}
            extra: dict[str, Any] = {}
            for result in row:
                components |= result.components
                extra |= result.extra
            combined.append(
                RewardResult(
                    score=sum(s.weight * scores[s.name] for s in self.sources),
                    components=components | scores,
                    elapsed_ms=elapsed,
                    output="".join(r.output for r in row),
                    sources=scores,
                    extra=extra,
                )
            )
        return combined

    def close(self) -> None:
        for source in self.sources:
            source.scorer.close()


def make_reward_scorer(
    cfg: RewardConfig,
    device: torch.device,
    model_groups: Mapping[str, RewardScorer] | None = None,
) -> RewardScorer:
    """The reward function's scorer alone, or combined with every reward model in use
    (`reward.model`, `reward.extra_models`), or the reward models alone when no function
    is chosen (trainer.rewards.resolution): each loaded here on `device` (`colocated`),
    or taken from `model_groups`, its own worker group by the model's name
    (`worker_group`, built by the distributed runtime)."""
    sections = cfg.model_sections()
    if not sections:
        return make_scorer(cfg)
    sources: list[RewardSource] = []
    if cfg.function is not None:  # with none, the reward models score alone (resolution)
        sources.append(
            RewardSource(cfg.function_source_name(), cfg.function_weight, make_scorer(cfg))
        )
    try:
        for section, model in sections:
            sources.append(
                RewardSource(
                    model.name,
                    model.weight,
                    _model_scorer(section, model, device, model_groups or {}),
                )
            )
    except BaseException:
        for source in sources:
            source.scorer.close()
        raise
    return CombinedScorer(sources)


def _model_scorer(
    section: str,
    model: RewardModelConfig,
    device: torch.device,
    model_groups: Mapping[str, RewardScorer],
) -> RewardScorer:
    if model.name in model_groups:
        return model_groups[model.name]
    if model.placement != "colocated":
        raise ValueError(
            f"{section}.placement={model.placement!r} runs the reward model on a Ray worker "
            "group of its own: start the run with `python -m trainer run` "
            "(trainer.commands.training_runtime.open_runtime), or set "
            f"{section}.placement=colocated"
        )
    from trainer.models.reward_model import RewardModelScorer

    return RewardModelScorer(model, device)

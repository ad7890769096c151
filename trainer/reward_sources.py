"""Several reward sources combined: the reward function and a reward model.

Each source scores every response; the reward is the weighted sum of their scores.
Every source's unweighted score is kept by name (`RewardResult.sources`, charted as
`critic/score/<name>/mean`) and as a component (`reward/<name>/mean`, which the studio's
dominating-component alert watches). A response that any source failed to score is an
error result naming the source, as with a single reward function.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from trainer.config.schema import RewardConfig
from trainer.rewards.contract import RewardRequest, RewardResult, RewardScorer, error_result
from trainer.rewards.sandbox.pool import make_scorer


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
            for result in row:
                components |= result.components
            combined.append(
                RewardResult(
                    score=sum(s.weight * scores[s.name] for s in self.sources),
                    components=components | scores,
                    elapsed_ms=elapsed,
                    output="".join(r.output for r in row),
                    sources=scores,
                )
            )
        return combined

    def close(self) -> None:
        for source in self.sources:
            source.scorer.close()


def function_source_name(cfg: RewardConfig) -> str:
    return cfg.custom_name if cfg.function == "custom" else cfg.function


def make_reward_scorer(
    cfg: RewardConfig, device: torch.device, model_scorer: RewardScorer | None = None
) -> RewardScorer:
    """The reward function's scorer alone, or combined with the reward model when
    `reward.model.path` is set: loaded here on `device` (`colocated`), or `model_scorer`,
    the model's own worker group (`worker_group`, built by the distributed runtime)."""
    function = make_scorer(cfg)
    if not cfg.model.path:
        return function
    if model_scorer is None:
        if cfg.model.placement != "colocated":
            function.close()
            raise ValueError(
                f"reward.model.placement={cfg.model.placement!r} runs the reward model on a "
                "Ray worker group of its own: start the run with `python -m trainer run` "
                "(trainer.runtime.open_runtime), or set reward.model.placement=colocated"
            )
        from trainer.models.reward_model import RewardModelScorer

        model_scorer = RewardModelScorer(cfg.model, device)
    return CombinedScorer(
        [
            RewardSource(function_source_name(cfg), cfg.function_weight, function),
            RewardSource(cfg.model.name, cfg.model.weight, model_scorer),
        ]
    )

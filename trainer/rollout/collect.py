"""Generate responses for a set of prompts and score them: the rollout phase."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trainer.rewards.contract import RewardRequest, RewardResult, RewardScorer
from trainer.rollout.engine import Completion, RolloutEngine, SamplingParams


@dataclass
class PromptItem:
    """A prompt ready for generation (what the data pipeline hands the rollout)."""

    uid: str  # stable id of the prompt (dataset index), names the GRPO group
    prompt_ids: list[int]
    prompt_text: str
    data_source: str
    ground_truth: Any
    extra_info: dict[str, Any] = field(default_factory=dict)
    row: int = -1  # its row's 0-based position in its data file (-1: from no file)


@dataclass
class Sample:
    prompt: PromptItem
    group: int  # index of the prompt within this step's batch
    completion: Completion
    reward: RewardResult
    score: float  # reward.score plus any shaping (overlong penalty)


def generate(
    engine: RolloutEngine, prompts: list[PromptItem], sampling: SamplingParams
) -> list[tuple[PromptItem, int, Completion]]:
    completions = engine.generate([p.prompt_ids for p in prompts], sampling)
    return [(prompts[c.prompt_index], c.prompt_index, c) for c in completions]


def score(
    scorer: RewardScorer, generated: list[tuple[PromptItem, int, Completion]]
) -> list[Sample]:
    requests = [
        RewardRequest(
            data_source=p.data_source,
            solution_str=c.text if c.answer is None else c.answer,
            ground_truth=p.ground_truth,
            extra_info=p.extra_info,
            prompt=p.prompt_text,
        )
        for p, _, c in generated
    ]
    results = scorer.score_batch(requests)
    return [
        Sample(prompt=p, group=g, completion=c, reward=r, score=r.score + c.turn_reward)
        for (p, g, c), r in zip(generated, results, strict=True)
    ]

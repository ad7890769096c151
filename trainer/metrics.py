"""Metric helpers: verl's names for rollout statistics."""

from __future__ import annotations

from collections import defaultdict

import torch
from torch import Tensor

from trainer.rollout.collect import Sample


def tensor_stats(name: str, values: Tensor, mask: Tensor | None = None) -> dict[str, float]:
    flat = values[mask.bool()] if mask is not None else values.reshape(-1)
    if flat.numel() == 0:
        return {}
    flat = flat.float()
    return {
        f"{name}/mean": float(flat.mean()),
        f"{name}/max": float(flat.max()),
        f"{name}/min": float(flat.min()),
    }


def rollout_metrics(samples: list[Sample], max_new_tokens: int) -> dict[str, float]:
    scores = torch.tensor([s.score for s in samples])
    lengths = torch.tensor([len(s.completion.token_ids) for s in samples], dtype=torch.float)
    prompt_lengths = torch.tensor([len(s.prompt.prompt_ids) for s in samples], dtype=torch.float)
    metrics = tensor_stats("critic/score", scores)
    metrics |= tensor_stats("response_length", lengths)
    metrics["response_length/clip_ratio"] = float((lengths >= max_new_tokens).float().mean())
    metrics |= tensor_stats("prompt_length", prompt_lengths)
    metrics["reward/error_rate"] = sum(1 for s in samples if s.reward.error) / len(samples)
    # Per-component reward metrics (verl does not log these during training).
    components: dict[str, list[float]] = defaultdict(list)
    for s in samples:
        for key, value in s.reward.components.items():
            components[key].append(value)
    for key, values in components.items():
        metrics[f"reward/{key}/mean"] = sum(values) / len(values)
    sources: dict[str, list[float]] = defaultdict(list)
    for s in samples:
        for key, value in s.reward.sources.items():
            sources[key].append(value)
    for key, values in sources.items():  # each source of a combined reward, unweighted
        metrics |= tensor_stats(f"critic/score/{key}", torch.tensor(values))
    groups: dict[int, list[float]] = defaultdict(list)
    for s in samples:
        groups[s.group].append(s.score)
    flat = sum(1 for g in groups.values() if max(g) == min(g))
    metrics["critic/zero_spread_group_fraction"] = flat / max(1, len(groups))
    return metrics

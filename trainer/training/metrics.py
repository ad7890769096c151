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


def throughput_metrics(
    num_params: int, peak_flops: float | None, tokens: float, step_s: float, update_s: float
) -> dict[str, float]:
    """FLOP rates of a step that trained on `tokens` (prompt and response) with a model of
    `num_params`, at ~6 FLOPs a parameter a token (forward and backward, as verl counts).

    `perf/tflops_per_s` spreads them over the whole step; `perf/mfu/actor` is the actor
    update's model FLOPs utilisation: over the update's own time, against `peak_flops`
    (the devices' dense bf16 peak; None on CPUs, which have no honest single figure)."""
    flops = 6.0 * num_params * tokens
    metrics = {"perf/tflops_per_s": flops / max(step_s, 1e-9) / 1e12}
    if peak_flops and update_s > 0:
        metrics["perf/mfu/actor"] = flops / update_s / peak_flops
    return metrics

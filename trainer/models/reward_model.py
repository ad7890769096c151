"""`RewardModelScorer`: a learned reward model (a sequence-classification head) as a
reward source.

The model reads the rendered prompt followed by the response and its single logit is
the score. Texts are tokenised with the reward model's own tokenizer (it may differ
from the policy's), cut from the left to `max_length` tokens so the response is kept,
and scored `batch_size` at a time without gradients.
"""

from __future__ import annotations

import time
from typing import Any, cast

import torch
from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

from trainer.config.schema import RewardModelConfig
from trainer.models.loading import _check_folder, resolve_dtype
from trainer.rewards.contract import RewardRequest, RewardResult, error_result


def refuse_generative_reward_model(path: str, config: Any) -> None:
    """A reward model is a sequence classifier; a causal LM prompted to judge (verl's
    generative reward model, served by its reward_model.rollout) is not one, and loading it
    as a classifier would score with an untrained head."""
    architectures = list(getattr(config, "architectures", None) or [])
    if architectures and not any(a.endswith("ForSequenceClassification") for a in architectures):
        raise ValueError(
            f"reward.model.path={path} is a {'/'.join(architectures)}, not a sequence "
            "classifier: RL Studio's reward models score with a classification head (one "
            "logit); generative reward models (verl's reward_model.rollout serving a causal "
            "LM judge) are not supported"
        )


class RewardModelScorer:
    def __init__(self, cfg: RewardModelConfig, device: torch.device) -> None:
        if not cfg.path:
            raise ValueError("reward.model.path is empty: there is no reward model to load")
        folder = _check_folder(cfg.path)
        self.cfg = cfg
        self.device = device
        self.tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        self.tokenizer.truncation_side = "left"  # keep the response, cut the prompt
        self.tokenizer.padding_side = "right"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        refuse_generative_reward_model(cfg.path, AutoConfig.from_pretrained(folder))
        model = AutoModelForSequenceClassification.from_pretrained(
            folder, dtype=resolve_dtype(cfg.dtype), local_files_only=True
        )
        if int(model.config.num_labels) != 1:
            raise ValueError(
                f"reward.model.path={cfg.path} has {model.config.num_labels} labels; a reward "
                "model has one (its logit is the score)"
            )
        model.config.pad_token_id = self.tokenizer.pad_token_id
        self.model = cast(Any, model).to(device).eval().requires_grad_(False)

    @torch.no_grad()
    def score_batch(self, requests: list[RewardRequest]) -> list[RewardResult]:
        results: list[RewardResult] = []
        size = self.cfg.batch_size
        for start in range(0, len(requests), size):
            chunk = requests[start : start + size]
            started = time.perf_counter()
            encoded = self.tokenizer(
                [r.prompt + r.solution_str for r in chunk],
                return_tensors="pt",
                padding=True,
                truncation=True,
                max_length=self.cfg.max_length,
                add_special_tokens=False,
            ).to(self.device)
            logits = self.model(**encoded).logits.float()[:, 0]  # (B,)
            per_row = (time.perf_counter() - started) * 1000 / len(chunk)
            for value in logits.tolist():
                if value != value or value in (float("inf"), float("-inf")):
                    results.append(error_result("the reward model returned a non-finite score"))
                else:
                    results.append(RewardResult(score=float(value), elapsed_ms=per_row))
        return results

    def close(self) -> None:
        pass

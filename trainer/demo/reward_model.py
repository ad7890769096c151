"""The offline demo reward model: a sequence-classification head on the demo policy.

Built from the demo model folder (its tokenizer, and its backbone, which already knows
arith) and trained for a few seconds on generated preference pairs of arith answers:
the correct answer, alone, is preferred over a wrong number and over the restated
style (``"7+5=12"``, which the rule reward rejects since its first integer is 7).
Bradley-Terry loss on the score difference, so the single logit ranks correct answers
above wrong ones: the restated style always (measured on every problem: 100%), a
wrong number most of the time (72% for answer + 2): only the head trains, on a frozen
backbone, to keep the build to seconds. It lives apart from `trainer.demo.model` so
building it never changes the demo policy (whose files key the test cache).
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import torch
from transformers import AutoModelForSequenceClassification, PreTrainedTokenizerBase

from trainer.demo.model import EOS, _prompt_text
from trainer.demo.toy_data import ARITH_DEFAULT, arith_answer, arith_problems, arith_prompt
from trainer.models.loading import load_tokenizer

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DemoRewardModel:
    path: Path
    seconds: float
    pair_accuracy: float  # held-in pairs ranked the right way round, after training


def preference_pairs(seed: int) -> list[tuple[str, str, str]]:
    """(prompt text content, chosen response, rejected response) for every arith problem:
    one wrong-number and one restated-style rejection each, EOS on half of them."""
    rng = random.Random(seed)
    pairs: list[tuple[str, str, str]] = []
    for a, op, b in arith_problems(ARITH_DEFAULT):
        question, answer = arith_prompt(a, op, b), arith_answer(a, op, b)
        wrong = answer + rng.choice([-3, -2, -1, 1, 2, 3, 10])
        for rejected in (str(wrong), f"{question}{answer}"):
            end = EOS if rng.random() < 0.5 else ""
            pairs.append((question, f"{answer}{end}", f"{rejected}{end}"))
    rng.shuffle(pairs)
    return pairs


def _encode(
    tokenizer: PreTrainedTokenizerBase, texts: list[str]
) -> tuple[torch.Tensor, torch.Tensor]:
    tokenizer.padding_side = "right"
    out = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
    return out["input_ids"], out["attention_mask"]


def _pair_tensors(
    tokenizer: PreTrainedTokenizerBase, pairs: list[tuple[str, str, str]]
) -> tuple[torch.Tensor, torch.Tensor, int]:
    prompts = [_prompt_text(tokenizer, q) for q, _, _ in pairs]
    texts = [p + c for p, (_, c, _) in zip(prompts, pairs, strict=True)]
    texts += [p + r for p, (_, _, r) in zip(prompts, pairs, strict=True)]
    ids, mask = _encode(tokenizer, texts)
    return ids, mask, len(pairs)


def pair_accuracy(model: Any, ids: torch.Tensor, mask: torch.Tensor, n: int) -> float:
    with torch.no_grad():
        scores = model(input_ids=ids, attention_mask=mask).logits[:, 0]
    return float((scores[:n] > scores[n:]).float().mean())


def build_demo_reward_model(
    policy_dir: str | Path, out_dir: str | Path, seed: int = 0, steps: int = 300
) -> DemoRewardModel:
    """Write the demo reward model folder (weights, config, tokenizer) to `out_dir`."""
    torch.manual_seed(seed)
    tokenizer = load_tokenizer(policy_dir)
    model = cast(
        Any,
        AutoModelForSequenceClassification.from_pretrained(
            str(policy_dir), num_labels=1, local_files_only=True
        ),
    )
    model.config.pad_token_id = tokenizer.pad_token_id
    ids, mask, n = _pair_tensors(tokenizer, preference_pairs(seed))
    started = time.perf_counter()
    # Only the head trains, on the backbone's features of every text computed once:
    # the policy's backbone already tells a finished correct answer from the rest, and
    # this keeps the build to seconds on a CPU.
    with torch.no_grad():
        hidden = model.model(input_ids=ids, attention_mask=mask).last_hidden_state
        last = mask.sum(dim=1) - 1  # right padding: the last real token
        features = hidden[torch.arange(len(ids)), last]  # (2n, H)
    head = model.score
    optimizer = torch.optim.AdamW(head.parameters(), lr=1e-2)
    for _ in range(steps):
        scores = head(features)[:, 0]
        loss = -torch.nn.functional.logsigmoid(scores[:n] - scores[n:]).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    model.eval()
    seconds = time.perf_counter() - started
    accuracy = pair_accuracy(model, ids, mask, n)
    log.info("demo reward model: %d steps in %.1f s, pair accuracy %.3f", steps, seconds, accuracy)
    out = Path(out_dir)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return DemoRewardModel(out, seconds, accuracy)

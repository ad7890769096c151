"""The offline demo model: a tiny tokenizer + Llama built locally, warm-started on arith.

Nothing is downloaded. `build_demo_assets` writes

- a byte-level BPE tokenizer (~512 ids, digits split one by one, ChatML
  template, ``<|im_end|>`` as EOS, ``<|pad|>``, left padding) saved as a
  `PreTrainedTokenizerFast` folder that `AutoTokenizer` loads;
- a random-init Llama causal LM (a Llama config, not Qwen2: transformers
  would pair a Qwen2 folder with Qwen's own tokenizer class and other ids),
  briefly supervised on arith so GRPO has signal: greedy accuracy is low but
  not zero and samples at T = 1 are sometimes right;
- the arith and countdown toy datasets as verl parquet.
"""

from __future__ import annotations

import argparse
import logging
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from trainer.data.toy import (
    ARITH_DEFAULT,
    verl_row,
    split_space,
    ArithSpec,
    arith_answer,
    arith_problems,
    arith_prompt,
    arith_rows,
    countdown_rows,
    write_rows,
)

log = logging.getLogger(__name__)

BOS, EOS, PAD = "<|im_start|>", "<|im_end|>", "<|pad|>"
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

DemoSize = Literal["tiny", "bench"]


@dataclass(frozen=True)
class ModelShape:
    hidden_size: int
    num_layers: int
    num_heads: int
    intermediate_size: int


# `bench` has ~10x the parameters of `tiny` (excluding embeddings), for throughput tests.
DEMO_SIZES: dict[DemoSize, ModelShape] = {
    "tiny": ModelShape(hidden_size=256, num_layers=4, num_heads=4, intermediate_size=688),
    "bench": ModelShape(hidden_size=512, num_layers=8, num_heads=8, intermediate_size=1376),
}

DEFAULT_WARMUP_STEPS = 60
WARMUP_BATCH = 64
WARMUP_LR = 1e-3
WARMUP_LR_STEPS = 20


@dataclass(frozen=True)
class DemoAssets:
    model_dir: Path  # model + tokenizer folder
    data: dict[str, tuple[Path, Path]]  # toy dataset name -> (train, test) parquet
    warmup_seconds: float
    greedy_accuracy: float | None  # on the arith test split; None when not evaluated
    sampled_accuracy: float | None  # T = 1, same prompts


def _tokenizer_corpus(spec: ArithSpec, seed: int) -> list[str]:
    texts = [
        f"user\n{arith_prompt(a, op, b)}\nassistant\n{arith_answer(a, op, b)}\n"
        for a, op, b in arith_problems(spec)
    ]
    train, _ = countdown_rows(200, 0, seed)
    texts += [f"user\n{row['prompt'][0]['content']}\nassistant\n" for row in train]
    return texts


def build_tokenizer(
    vocab_size: int = 512, spec: ArithSpec = ARITH_DEFAULT, seed: int = 0
) -> PreTrainedTokenizerFast:
    """Byte-level BPE trained on the toy corpus, ChatML template, left padding."""
    tok = Tokenizer(models.BPE())
    # Digits one by one (as Llama/Qwen do) keep arithmetic compositional.
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[BOS, EOS, PAD],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_tokenizer_corpus(spec, seed), trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token=EOS,
        pad_token=PAD,
        padding_side="left",
        chat_template=CHATML_TEMPLATE,
        model_max_length=1024,
        clean_up_tokenization_spaces=False,
    )


def build_model(
    tokenizer: PreTrainedTokenizerFast,
    size: DemoSize = "tiny",
    hidden_size: int | None = None,
    num_layers: int | None = None,
    seed: int = 0,
) -> LlamaForCausalLM:
    """A random-init Llama with tied embeddings; `hidden_size`/`num_layers` override `size`."""
    shape = DEMO_SIZES[size]
    hidden = hidden_size or shape.hidden_size
    heads = max(1, hidden // 64)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        num_hidden_layers=num_layers or shape.num_layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        # SwiGLU width ~ 8/3 * hidden, rounded to a multiple of 16 (688 for 256).
        intermediate_size=(hidden * 8 // 3 + 15) // 16 * 16,
        max_position_embeddings=1024,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.convert_tokens_to_ids(BOS),
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model


def _sft_batches(
    tokenizer: PreTrainedTokenizerFast, spec: ArithSpec, seed: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """All arith *train* problems as (input_ids, attention_mask, labels); only the response
    (answer + EOS) is supervised."""
    train_pool, _ = split_space(arith_problems(spec), seed)
    train = [
        verl_row("arith", arith_prompt(a, op, b), str(arith_answer(a, op, b)), "train", i)
        for i, (a, op, b) in enumerate(train_pool)
    ]
    seqs: list[list[int]] = []
    labels: list[list[int]] = []
    for row in train:
        prompt = tokenizer.apply_chat_template(row["prompt"], add_generation_prompt=True, tokenize=False)
        p_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        r_ids = tokenizer(row["reward_model"]["ground_truth"] + EOS, add_special_tokens=False)[
            "input_ids"
        ]
        seqs.append(p_ids + r_ids)
        labels.append([-100] * len(p_ids) + r_ids)
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), tokenizer.pad_token_id, dtype=torch.long)
    mask = torch.zeros_like(ids)
    lab = torch.full_like(ids, -100)
    for i, (s, lb) in enumerate(zip(seqs, labels, strict=True)):
        ids[i, : len(s)], mask[i, : len(s)], lab[i, : len(s)] = torch.tensor(s), 1, torch.tensor(lb)
    return ids, mask, lab


def warm_start(
    model: LlamaForCausalLM,
    tokenizer: PreTrainedTokenizerFast,
    steps: int,
    seed: int = 0,
    spec: ArithSpec = ARITH_DEFAULT,
    batch_size: int = WARMUP_BATCH,
    lr: float = WARMUP_LR,
) -> float:
    """A few supervised steps on arith train problems; returns the last loss."""
    if steps <= 0:
        return float("nan")
    ids, mask, lab = _sft_batches(tokenizer, spec, seed)
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.0)
    # Linear warmup: without it Adam at this lr stalls the tiny model for many steps.
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / WARMUP_LR_STEPS))
    model.train()
    loss = torch.tensor(float("nan"))
    for _ in range(steps):
        pick = torch.randint(0, len(ids), (batch_size,), generator=gen)
        out = model(input_ids=ids[pick], attention_mask=mask[pick], labels=lab[pick])
        loss = out.loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
    model.eval()
    return float(loss.detach())


_INT = re.compile(r"-?\d+")


def first_int_matches(response: str, ground_truth: str) -> float:
    """1.0 when the first integer in `response` equals the ground truth, else 0.0."""
    match = _INT.search(response)
    return float(match is not None and match.group() == str(ground_truth).strip())


def arith_accuracy(
    model: LlamaForCausalLM,
    tokenizer: PreTrainedTokenizerFast,
    n_test: int = 256,
    seed: int = 0,
    temperature: float = 0.0,
    n: int = 1,
    spec: ArithSpec = ARITH_DEFAULT,
) -> float:
    """Mean first-integer accuracy on the arith test split."""
    from trainer.rollout.engine import SamplingParams
    from trainer.rollout.hf import HFEngine

    _, test = arith_rows(0, n_test, seed, spec)
    texts = [
        tokenizer.apply_chat_template(row["prompt"], add_generation_prompt=True, tokenize=False)
        for row in test
    ]
    prompt_ids = tokenizer(texts, add_special_tokens=False)["input_ids"]
    engine = HFEngine(model, tokenizer, device="cpu", max_batch_size=256)
    params = SamplingParams(n=n, temperature=temperature, max_new_tokens=8, seed=seed)
    completions = engine.generate(prompt_ids, params)
    scores = [
        first_int_matches(c.text, test[c.prompt_index]["reward_model"]["ground_truth"])
        for c in completions
    ]
    return sum(scores) / len(scores)

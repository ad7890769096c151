"""One completion decoded token by token and handed out as it grows (the playground's).

`HFEngine.generate` returns whole completions, which is what training wants; a person
chatting wants to read the reply while it is written. `stream_completion` runs the same
decoding (one prefill, then one token a step over a preallocated KV cache, sampled by
`sample_next` with the engine's temperature / top-k / top-p rules) for a single prompt
and yields each token as soon as it is sampled, with the reply's text so far.

`min_new_tokens` keeps the end-of-sequence tokens out of the sample until the reply is
that long (transformers' `min_new_tokens`): a small model that answers in two tokens can
still be asked for a long reply.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import torch

from trainer.rollout.engine import SamplingParams
from trainer.rollout.hf import HFEngine
from trainer.rollout.kv_cache import preallocate
from trainer.rollout.sampler import sample_next

REPLACEMENT = "\ufffd"  # what a decode of a cut multi-byte character ends with


@dataclass(frozen=True)
class StreamStep:
    token_id: int
    text: str  # the reply so far, decoded (special tokens skipped)
    finish_reason: str | None  # "eos" | "length" on the last step, else None


def stream_completion(
    engine: HFEngine,
    prompt_ids: list[int],
    sampling: SamplingParams,
    min_new_tokens: int = 0,
) -> Iterator[StreamStep]:
    """Sample a reply to `prompt_ids`, yielding every token as it is chosen."""
    if not prompt_ids:
        raise ValueError("the prompt is empty; it needs at least one token")
    model, device = engine.model, engine.device
    generator = None
    if sampling.seed is not None and sampling.temperature > 0:
        generator = torch.Generator(device=device)
        generator.manual_seed(sampling.seed)
    eos = torch.tensor(sorted(engine.eos_ids), dtype=torch.long, device=device)
    input_ids = torch.tensor([prompt_ids], dtype=torch.long, device=device)  # (1, P)
    tokens: list[int] = []
    text = ""
    with torch.inference_mode():
        out = model(input_ids=input_ids, use_cache=True, logits_to_keep=1)
        cache = preallocate(out.past_key_values, len(prompt_ids) + sampling.max_new_tokens)
        logits = out.logits[:, -1, :].float()  # (1, V)
        position = len(prompt_ids)
        for step in range(sampling.max_new_tokens):
            if step < min_new_tokens and len(eos):
                logits[:, eos] = float("-inf")  # not allowed to end yet
            token = int(sample_next(logits, sampling, generator)[0][0])
            tokens.append(token)
            finish = None
            if token in engine.eos_ids:
                finish = "eos"
            elif step == sampling.max_new_tokens - 1:
                finish = "length"
            decoded = engine.tokenizer.decode(tokens, skip_special_tokens=True)
            # Hold back a character cut in the middle of its bytes until it is whole.
            if finish is not None or not decoded.endswith(REPLACEMENT):
                text = decoded
            yield StreamStep(token, text, finish)
            if finish is not None:
                return
            out = model(
                input_ids=torch.tensor([[token]], dtype=torch.long, device=device),
                position_ids=torch.tensor([[position]], dtype=torch.long, device=device),
                past_key_values=cache,
                use_cache=True,
            )
            cache = out.past_key_values
            logits = out.logits[:, -1, :].float()
            position += 1

"""`HFEngine`: the transformers rollout engine (CPU and small GPU runs).

A hand-written sampling loop over `past_key_values`: one prefill of the
left-padded distinct prompts (the n samples of a prompt share it, as a prefix
cache would), then one token per step. On the CPU the host checks every step and drops
finished rows from the batch and its KV cache at once; on CUDA the step's bookkeeping
stays on the device and the host looks only every few steps
(trainer.rollout.device_decode); "graph" decoding runs that loop over fixed buffers, each
token's forward one CUDA graph replay (trainer.rollout.static_decode). It yields the
sampling log-probabilities directly, which `model.generate` does not.

Log-probabilities are ``log_softmax(logits / T)`` of the model's logits, taken
before top-k/top-p truncation, i.e. exactly what the actor recomputes with a
teacher-forced forward pass at the same temperature; greedy decoding
(T = 0) reports them under T = 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

import torch
from torch import Tensor, nn

from trainer.rollout.device_decode import Decoded, decode_on_device
from trainer.rollout.engine import Completion, FinishReason, SamplingParams
from trainer.rollout.kv_cache import preallocate
from trainer.rollout.sampler import sample_next
from trainer.rollout.static_decode import StaticDecodeStep, decode_static


@dataclass
class _Row:
    prompt_index: int
    token_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    finish_reason: FinishReason | None = None  # set when the row ends


@dataclass(frozen=True)
class _Prefilled:
    """A chunk after its prefill, one entry per row: what decoding starts from."""

    cache: Any  # the KV cache (a transformers Cache)
    logits: Tensor  # (B, V) of the next token
    attention_mask: Tensor  # (B, P)
    next_pos: Tensor  # (B,) the next token's position
    width: int  # P


def _filled(rows: list[_Row], decoded: Decoded) -> list[_Row]:
    """`rows` with what the device loop decoded for them (one copy to the host)."""
    tokens, logprobs = decoded.tokens.tolist(), decoded.logprobs.tolist()
    lengths, eos = decoded.lengths.tolist(), decoded.ended_on_eos.tolist()
    for row, row_tokens, row_logprobs, length, ended_on_eos in zip(
        rows, tokens, logprobs, lengths, eos, strict=True
    ):
        row.token_ids, row.logprobs = row_tokens[:length], row_logprobs[:length]
        row.finish_reason = "eos" if ended_on_eos else "length"
    return rows


class DecodeWatcher(Protocol):
    """Sees the engine's forwards, for work that reuses what decoding computed: the CPU
    speed package records the linear layers' outputs through one
    (trainer.cpu_speed.replay_recorder). Called only from inside generate()."""

    def generation(self, max_new_tokens: int) -> AbstractContextManager[None]:
        """Around one generate() call, inside inference mode."""
        ...

    def prefill(self, rows: int) -> None:
        """The next forward prefills a chunk of `rows` new rows."""
        ...

    def decode(self, active: Tensor, step: int) -> None:
        """The next forward feeds response token `step` of the chunk's rows `active`
        (their indices in the chunk, in the order of the forward's batch)."""
        ...

    def generated(self, completions: list[Completion]) -> None:
        """The call's completions, in the order of its rows."""
        ...


def eos_ids_of(model: nn.Module, tokenizer: Any) -> set[int]:
    ids: set[int] = set()
    for source in (tokenizer.eos_token_id, getattr(model, "generation_config", None)):
        value = getattr(source, "eos_token_id", source)
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list | tuple):
            ids.update(int(v) for v in value)
    return ids


def _distinct_prompts(prompts: list[list[int]]) -> tuple[list[list[int]], list[int]]:
    """The distinct prompts in first-seen order, and for each row the index of its own."""
    index: dict[tuple[int, ...], int] = {}
    row_prompt = [index.setdefault(tuple(p), len(index)) for p in prompts]
    return [list(p) for p in index], row_prompt


class HFEngine:
    """Batched generation with a transformers causal LM; see the module docstring.

    `model` may be the actor's own module: then weights are always current and
    `update_weights` is a no-op (it checks the tensors are the model's own).
    `max_batch_size` caps the sequences (prompts x n) generated together.
    The model must already be on `device`.
    """

    def __init__(
        self,
        model: nn.Module,
        tokenizer: Any,
        device: str | torch.device = "cpu",
        max_batch_size: int = 64,
        offload_when_asleep: bool = False,
        decode: Literal["eager", "device", "graph"] | None = None,
    ) -> None:
        if max_batch_size < 1:
            raise ValueError(f"max_batch_size must be >= 1, got {max_batch_size}")
        self.model = model
        self.tokenizer = tokenizer
        self.device = torch.device(device)
        self.max_batch_size = max_batch_size
        # Move the weights to CPU in sleep() (only for an engine owning a separate copy).
        self.offload_when_asleep = offload_when_asleep
        self.asleep = False
        # The decode loop: the host checks every token ("eager"), or only every few
        # ("device", trainer.rollout.device_decode), or that over fixed buffers, replayed
        # from a CUDA graph on CUDA ("graph", trainer.rollout.static_decode). By default
        # "device" on CUDA: "graph" becomes the default once measured there (bench/gpu_check.py).
        self.decode = decode or ("device" if self.device.type == "cuda" else "eager")
        self.watcher: DecodeWatcher | None = None  # see DecodeWatcher
        self.eos_ids = eos_ids_of(model, tokenizer)
        pad = tokenizer.pad_token_id
        self.pad_id = int(pad) if pad is not None else min(self.eos_ids, default=0)

    # -- protocol ---------------------------------------------------------------------------

    def generate(self, prompts: list[list[int]], sampling: SamplingParams) -> list[Completion]:
        """len(prompts) * sampling.n completions, prompt-major (all n of prompt 0 first)."""
        if self.asleep:
            raise RuntimeError("HFEngine.generate() called while asleep; call wake() first")
        for i, prompt in enumerate(prompts):
            if not prompt:
                raise ValueError(f"prompt {i} is empty; every prompt needs at least one token")
        expanded = [i for i in range(len(prompts)) for _ in range(sampling.n)]
        generator = None
        if sampling.seed is not None and sampling.temperature > 0:
            generator = torch.Generator(device=self.device)
            generator.manual_seed(sampling.seed)
        was_training = self.model.training
        self.model.eval()
        rows: list[_Row] = []
        watcher = self.watcher
        watching = watcher.generation(sampling.max_new_tokens) if watcher else nullcontext()
        try:
            with torch.inference_mode(), watching:
                for start in range(0, len(expanded), self.max_batch_size):
                    chunk = expanded[start : start + self.max_batch_size]
                    rows.extend(
                        self._generate_chunk(
                            [prompts[i] for i in chunk], chunk, sampling, generator
                        )
                    )
        finally:
            self.model.train(was_training)
        completions = [self._completion(row, sampling.stop) for row in rows]
        if watcher is not None:
            watcher.generated(completions)
        return completions

    def update_weights(self, state: Mapping[str, torch.Tensor]) -> None:
        """Load a full state dict; a no-op when `state` holds this model's own tensors."""
        own = self.model.state_dict()
        if all(
            name in own and tensor.data_ptr() == own[name].data_ptr()
            for name, tensor in state.items()
        ):
            return
        self.model.load_state_dict(state, strict=True)

    def sleep(self) -> None:
        """Drop cached memory; the KV cache lives only inside generate(), so little is held."""
        self.asleep = True
        if self.offload_when_asleep:
            self.model.to("cpu")
        if self.device.type == "cuda":
            torch.cuda.empty_cache()

    def wake(self) -> None:
        if self.offload_when_asleep:
            self.model.to(self.device)
        self.asleep = False

    # -- generation ------------------------------------------------------------------------

    def _generate_chunk(
        self,
        prompts: list[list[int]],
        prompt_indices: list[int],
        sampling: SamplingParams,
        generator: torch.Generator | None,
    ) -> list[_Row]:
        rows = [_Row(prompt_index=i) for i in prompt_indices]
        prefilled = self._prefill(prompts)
        # The watcher follows the eager loop's rows; stop strings need the host each step.
        on_device = self.decode != "eager" and self.watcher is None and not sampling.stop
        if on_device and self.decode == "graph" and sampling.max_new_tokens > 1:
            return _filled(rows, self._decode_graph(prefilled, sampling, generator))
        # Room for the whole completion: decoding then writes in place, no per-token copy.
        cache = preallocate(prefilled.cache, prefilled.width + sampling.max_new_tokens)
        if on_device:
            decoded = decode_on_device(
                self.model,
                cache,
                prefilled.logits,
                prefilled.attention_mask,
                prefilled.next_pos,
                sampling,
                generator,
                self._eos_tensor(),
                self.pad_id,
            )
            return _filled(rows, decoded)
        return self._decode_eager(rows, replace(prefilled, cache=cache), sampling, generator)

    def _eos_tensor(self) -> Tensor:
        return torch.tensor(sorted(self.eos_ids), dtype=torch.long, device=self.device)

    def _decode_graph(
        self, prefilled: _Prefilled, sampling: SamplingParams, generator: torch.Generator | None
    ) -> Decoded:
        """The device loop over fixed buffers, captured as CUDA graphs on CUDA."""
        capture = self.device.type == "cuda"
        step = StaticDecodeStep.from_prefill(
            self.model,
            prefilled.cache,
            prefilled.attention_mask,
            prefilled.next_pos,
            sampling.max_new_tokens,
            prefilled.logits.shape[-1],
            capture,
        )
        return decode_static(
            step, prefilled.logits, sampling, generator, self._eos_tensor(), self.pad_id, capture
        )

    def _prefill(self, prompts: list[list[int]]) -> _Prefilled:
        """One forward over the chunk's distinct prompts, expanded to one row per prompt:
        the n samples of a prompt share its prefill, each row gets a copy of its prompt's
        KV cache and last logits."""
        batch = len(prompts)
        distinct, row_prompt = _distinct_prompts(prompts)
        width = max(len(p) for p in distinct)
        input_ids = torch.full((len(distinct), width), self.pad_id, dtype=torch.long)
        attention_mask = torch.zeros((len(distinct), width), dtype=torch.long)
        for b, prompt in enumerate(distinct):  # left padding
            input_ids[b, width - len(prompt) :] = torch.tensor(prompt, dtype=torch.long)
            attention_mask[b, width - len(prompt) :] = 1
        input_ids = input_ids.to(self.device)  # (U, P)
        attention_mask = attention_mask.to(self.device)  # (U, P)
        position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)  # (U, P)
        if self.watcher is not None:
            self.watcher.prefill(batch)
        out = self.model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=position_ids,
            use_cache=True,
            logits_to_keep=1,
        )
        cache = out.past_key_values
        logits = out.logits[:, -1, :].float()  # (U, V)
        next_pos = position_ids[:, -1] + 1  # (U,)
        if len(distinct) < batch:
            expand = torch.tensor(row_prompt, device=self.device)  # (B,) row -> prompt
            cache.batch_select_indices(expand)
            logits, attention_mask, next_pos = (
                logits[expand],
                attention_mask[expand],
                next_pos[expand],
            )
        return _Prefilled(cache, logits, attention_mask, next_pos, width)

    def _decode_eager(
        self,
        rows: list[_Row],
        prefilled: _Prefilled,
        sampling: SamplingParams,
        generator: torch.Generator | None,
    ) -> list[_Row]:
        """The host's loop: one token per step, finished rows dropped at once."""
        cache, logits = prefilled.cache, prefilled.logits
        attention_mask, next_pos = prefilled.attention_mask, prefilled.next_pos
        active = torch.arange(len(rows), device=self.device)  # rows of `rows` still generating
        stop_window = 4 * max((len(s) for s in sampling.stop), default=0) + 8

        for step in range(sampling.max_new_tokens):
            tokens, logprobs = sample_next(logits, sampling, generator)  # (A,), (A,)
            keep: list[int] = []
            for a, (token, logprob) in enumerate(
                zip(tokens.tolist(), logprobs.tolist(), strict=True)
            ):
                row = rows[int(active[a])]
                row.token_ids.append(token)
                row.logprobs.append(logprob)
                if token in self.eos_ids:
                    row.finish_reason = "eos"
                elif sampling.stop and self._hit_stop(row.token_ids, sampling.stop, stop_window):
                    row.finish_reason = "stop"
                elif step == sampling.max_new_tokens - 1:
                    row.finish_reason = "length"
                else:
                    keep.append(a)
            if not keep:
                break
            if len(keep) < len(active):  # drop finished rows from the batch and the cache
                index = torch.tensor(keep, device=self.device)
                cache.batch_select_indices(index)
                active, tokens = active[index], tokens[index]
                attention_mask, next_pos = attention_mask[index], next_pos[index]
            attention_mask = torch.cat(
                [attention_mask, attention_mask.new_ones((len(active), 1))], dim=-1
            )
            if self.watcher is not None:  # this forward feeds response token `step` of each row
                self.watcher.decode(active, step)
            out = self.model(
                input_ids=tokens[:, None],
                attention_mask=attention_mask,
                position_ids=next_pos[:, None],
                past_key_values=cache,
                use_cache=True,
            )
            cache = out.past_key_values
            logits = out.logits[:, -1, :].float()
            next_pos = next_pos + 1
        return rows

    def _hit_stop(self, token_ids: list[int], stop: tuple[str, ...], window: int) -> bool:
        # Only the tail can hold a new match: earlier text was checked at earlier steps.
        tail = self.tokenizer.decode(token_ids[-window:], skip_special_tokens=True)
        return any(s in tail for s in stop)

    def _completion(self, row: _Row, stop: tuple[str, ...]) -> Completion:
        text: str = self.tokenizer.decode(row.token_ids, skip_special_tokens=True)
        if row.finish_reason == "stop":  # keep the stop string, cut what its token carried after
            ends = [text.find(s) + len(s) for s in stop if s in text]
            if ends:
                text = text[: min(ends)]
        return Completion(
            prompt_index=row.prompt_index,
            token_ids=row.token_ids,
            logprobs=row.logprobs,
            text=text,
            finish_reason=row.finish_reason or "length",  # none: a budget of 0 tokens
        )

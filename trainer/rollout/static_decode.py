"""Decoding over fixed buffers, so that one token's forward can be a CUDA graph.

On a GPU, a small model's decode step is launch-bound: a forward of the 0.5B shape is
thousands of small kernels, and the host takes longer to launch them than the GPU takes
to run them (docs/benchmarks.md, "The trainer on a GPU"). A CUDA graph records the step's
kernels once and replays them with one launch, but only if every replay reads and
writes the same memory and the host never waits on the device inside the step. The
device loop (trainer.rollout.device_decode) breaks both: its attention mask grows by one
column per token (`torch.cat`, new memory every step), its KV cache returns views of a
growing width, and transformers turns a 2D padding mask into a 4D one with a check on
the host at every forward.

`StaticDecodeStep` owns everything one decode forward touches, allocated once:
- a KV cache of full width (prompt + max_new_tokens) per layer, written at a column
  held in a device tensor (`ColumnLayer`), so attention always reads the whole buffer;
- a 4D boolean mask of that width (transformers passes a 4D mask through untouched)
  whose prompt part comes from the padding and whose completion columns are opened, one
  per step, by an in-place fill at that same column tensor;
- the input token and position buffers, and the logits the step writes.
Its attention is `decode_attention`, whatever the model was loaded with: one query token
per row lets grouped-query heads read their shared KV head without the copy transformers
makes when a mask is given.
Each step copies the sampled tokens in, then runs the forward: replayed from a graph on
CUDA, called directly elsewhere (the CPU runs the same code, which is how the tests
check it; it is not faster there).

Sampling and the per-row bookkeeping stay outside the graph (a dozen small kernels, and
a seeded generator would otherwise have to be registered with the graph); the host looks
at the batch every `SYNC_EVERY` steps, as in the device loop. Finished rows are
compacted in buckets: when at most half of a bucket still decodes, the live rows move
into a step of the next power of two that holds them (a gather of their cache), which
captures its own graph; the padding positions of a bucket decode a copy of a live row
and their draws are written to a scratch row that nobody reads.

Greedy decoding gives the eager loop's tokens up to float rounding: attention sums over
the masked columns too (each adds an exact zero, but a longer reduction may round in
another order).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from transformers import AttentionInterface
from transformers.cache_utils import Cache, DynamicLayer, StaticLayer

from trainer.config.sampling import SamplingParams
from trainer.rollout.device_decode import SYNC_EVERY, Decoded, DecodeOutputs
from trainer.rollout.sampler import sample_next

# The name the decode step's attention is registered under with transformers.
DECODE_ATTENTION = "rlstudio_static_decode"


def decode_attention(
    module: nn.Module,
    query: Tensor,  # (B, H, 1, D)
    key: Tensor,  # (B, Hkv, C, D)
    value: Tensor,  # (B, Hkv, C, D)
    attention_mask: Tensor | None,  # (B, 1, 1, C) bool, True attends
    scaling: float | None = None,
    dropout: float = 0.0,
    **kwargs: Any,
) -> tuple[Tensor, None]:
    """One query token per row against the whole cache, without repeating the KV heads.

    transformers' SDPA path repeats each of the Hkv key and value heads H / Hkv times
    whenever a mask is given (SDPA's own grouped-query mode needs mask-free CUDA calls):
    at the 0.5B shape, 64 rows and 780 columns, that is 180 MB written and read again per
    layer and step, far more than the step's weights. With one query token, the H / Hkv
    query heads that share a KV head can instead be that head's query positions:
    (B, Hkv, H / Hkv, D) against (B, Hkv, C, D), the row's mask broadcast over them. Head
    h reads KV head h // (H / Hkv), as `repeat_kv` lays them out."""
    if dropout or query.shape[2] != 1:
        raise ValueError("the static decode attention takes one query token, without dropout")
    for name in ("sliding_window", "softcap", "s_aux"):
        if kwargs.get(name) is not None:
            raise ValueError(f"the static decode attention has no {name}")
    batch, heads, _, dim = query.shape
    grouped = query.reshape(batch, key.shape[1], heads // key.shape[1], dim)
    out = F.scaled_dot_product_attention(
        grouped, key, value, attn_mask=attention_mask, scale=scaling
    )  # (B, Hkv, H / Hkv, D)
    return out.reshape(batch, 1, heads, dim), None


AttentionInterface.register(DECODE_ATTENTION, decode_attention)


class ColumnLayer(StaticLayer):
    """One layer's keys and values over the full width, written at `column` (a (1,) long
    tensor on the device that the decode step advances): `update` returns the whole
    buffers, so their shapes and addresses never change."""

    def __init__(self, keys: Tensor, values: Tensor, column: Tensor) -> None:
        super().__init__(max_cache_len=keys.shape[-2])
        self.key_buffer, self.value_buffer, self.column = keys, values, column
        self.keys, self.values = keys, values  # what transformers reads
        self.device, self.dtype = keys.device, keys.dtype
        self.batch_size, self.num_heads = keys.shape[:2]
        self.k_head_dim, self.v_head_dim = keys.shape[-1], values.shape[-1]
        self.is_initialized = True

    def update(
        self, key_states: Tensor, value_states: Tensor, *args: object, **kwargs: object
    ) -> tuple[Tensor, Tensor]:
        self.key_buffer.index_copy_(2, self.column, key_states)
        self.value_buffer.index_copy_(2, self.column, value_states)
        return self.key_buffer, self.value_buffer

    def get_seq_length(self) -> int:
        raise RuntimeError("the static decode step always passes position ids")


class StaticDecodeStep:
    """The buffers of one bucket of rows and the forward over them (module docstring)."""

    def __init__(
        self,
        model: nn.Module,
        keys: list[Tensor],  # per layer (B, H, C, D), the prompt's columns filled
        values: list[Tensor],
        mask: Tensor,  # (B, 1, 1, C) bool: True attends
        position_ids: Tensor,  # (B, 1) the next token's position
        column: int,  # the next token's column in the buffers
        logits_width: int,
        capture: bool,
    ) -> None:
        self.model = model
        device = mask.device
        self.column = torch.tensor([column], dtype=torch.long, device=device)
        self.layers = [ColumnLayer(k, v, self.column) for k, v in zip(keys, values, strict=True)]
        self.cache = Cache(layers=list(self.layers))
        self.mask = mask
        self.position_ids = position_ids
        rows = mask.shape[0]
        self.input_ids = torch.zeros((rows, 1), dtype=torch.long, device=device)
        self.logits = torch.zeros((rows, logits_width), dtype=torch.float32, device=device)
        self.graph: Any = None
        if capture:
            self._capture()

    @classmethod
    def from_prefill(
        cls,
        model: nn.Module,
        cache: Cache,
        attention_mask: Tensor,  # (B, P) the prompts' padding
        next_pos: Tensor,  # (B,)
        max_new_tokens: int,
        logits_width: int,
        capture: bool,
    ) -> StaticDecodeStep:
        """The step after a prefill whose cache holds the prompts' P columns."""
        rows, width = attention_mask.shape
        total = width + max_new_tokens
        keys: list[Tensor] = []
        values: list[Tensor] = []
        for layer in cache.layers:
            if type(layer) is not DynamicLayer or layer.keys is None or layer.values is None:
                raise ValueError(f"static decoding handles full-attention layers, not {layer!r}")
            for source, into in ((layer.keys, keys), (layer.values, values)):
                buffer = source.new_zeros((*source.shape[:2], total, source.shape[-1]))
                buffer[:, :, :width] = source
                into.append(buffer)
        mask = torch.zeros((rows, 1, 1, total), dtype=torch.bool, device=attention_mask.device)
        mask[:, 0, 0, :width] = attention_mask.bool()
        return cls(
            model, keys, values, mask, next_pos[:, None].clone(), width, logits_width, capture
        )

    @property
    def rows(self) -> int:
        return int(self.mask.shape[0])

    def _forward(self) -> None:
        """What the graph holds: open the column, one forward, advance. The model's
        attention is the decode attention for this forward only (it reads the config at
        each call; a graph keeps the kernels chosen at capture)."""
        self.mask.index_fill_(-1, self.column, True)
        config: Any = self.model.config
        attention = config._attn_implementation
        config._attn_implementation = DECODE_ATTENTION
        try:
            out = self.model(
                input_ids=self.input_ids,
                attention_mask=self.mask,
                position_ids=self.position_ids,
                cache=self.cache,
                use_cache=True,
            )
        finally:
            config._attn_implementation = attention
        self.logits.copy_(out.logits[:, -1, :])
        self.column.add_(1)
        self.position_ids.add_(1)

    def _capture(self) -> None:
        # A warm-up forward first, outside the graph, on a side stream (as torch's docs
        # ask): it makes the lazy allocations (cuBLAS workspaces, ...) that capture must
        # not. It writes the column the next real step writes again, and opens the mask
        # column that step opens anyway; the counters are put back.
        column, positions = self.column.clone(), self.position_ids.clone()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            self._forward()
        torch.cuda.current_stream().wait_stream(stream)
        self.column.copy_(column)
        self.position_ids.copy_(positions)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):  # recorded, not run: the state stays as it is
            self._forward()

    def __call__(self, tokens: Tensor) -> Tensor:
        """Feed `tokens` (B,), one per row; the next token's logits (B, V), float32 (the
        same buffer every step: read it before the next call)."""
        self.input_ids.copy_(tokens[:, None])
        if self.graph is not None:
            self.graph.replay()
        else:
            self._forward()
        return self.logits

    def select(self, index: Tensor, capture: bool) -> StaticDecodeStep:
        """A step over the rows `index` (a gather: new buffers, its own graph)."""
        return StaticDecodeStep(
            self.model,
            [layer.key_buffer[index] for layer in self.layers],
            [layer.value_buffer[index] for layer in self.layers],
            self.mask[index],
            self.position_ids[index],
            int(self.column),
            self.logits.shape[-1],
            capture,
        )


def bucket_size(count: int) -> int:
    """The smallest power of two that holds `count` rows."""
    return 1 << max(count - 1, 0).bit_length()


def decode_static(
    step: StaticDecodeStep,
    logits: Tensor,  # (B, V) float: the prefill's last logits per row
    sampling: SamplingParams,
    generator: torch.Generator | None,
    eos_ids: Tensor,  # (E,) long, on the device
    pad_id: int,
    capture: bool,
    sync_every: int = SYNC_EVERY,
) -> Decoded:
    """The device loop's bookkeeping around `step` (module docstring)."""
    rows, device = step.rows, logits.device
    steps = sampling.max_new_tokens
    scratch = rows  # the padding positions of a bucket record into this extra row
    outputs = DecodeOutputs(rows + 1, steps, pad_id, device)
    outputs.finished[scratch] = True
    batch_rows = torch.arange(rows, device=device)  # batch position -> row
    for index in range(steps):
        tokens, logprobs = sample_next(logits, sampling, generator)  # (A,), (A,)
        outputs.record(index, batch_rows, tokens, logprobs, eos_ids)
        if index == steps - 1:
            break
        if (index + 1) % sync_every == 0:  # the host looks: one sync per bucket of steps
            alive = outputs.alive(batch_rows)
            count = int(alive.sum())
            if count == 0:
                break
            if count <= step.rows // 2:  # move the live rows into a smaller bucket
                live = alive.nonzero()[:, 0]
                size = bucket_size(count)
                padding = live[:1].expand(size - count)  # decode a copy, record nowhere
                keep = torch.cat([live, padding])
                step = step.select(keep, capture)
                tokens = tokens[keep]
                batch_rows = torch.cat([batch_rows[live], torch.full_like(padding, scratch)])
        logits = step(tokens)
    return outputs.decoded(rows)

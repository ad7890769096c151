"""Replaying the rollout's linear-layer outputs in the update: the forward is not multiplied twice.

With one optimizer step per batch (GRPO's usual setting: one epoch, one mini-batch), the
update's forward runs the very weights that sampled the batch, on the very tokens: every
linear layer's output at every response position was already computed while decoding.
The HF engine records those outputs (`LinearOutputs.recording`: each of the model's linear
layers writes its decoding output straight into it); the update's response pass replays them
(`LinearOutputs.replaying`) instead of multiplying again. Autograd still runs the rest of
the forward (norms, rotary, attention, activations, on the replayed values) and the whole
backward: each replayed layer saves its recomputed input, so its weight and input
gradients are the ordinary ones. On CPU the matmuls are most of an update, and the
forward's are a third of them.

The values are the decoding's instead of a teacher-forced pass's: the same function of the
same weights and tokens, computed in other row blocks, so they differ by float rounding
(as any two batch layouts do); the recomputed log-probabilities then equal the sampling
ones exactly. Replay is refused, and the update runs its ordinary forward, unless the
weights are still those of the rollout: the model object is the same and every
parameter's version counter (bumped by every in-place write, such as an optimizer step
or a checkpoint load) is unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn

from trainer.cpu_speed.onednn_linear import (
    PLAIN_LINEARS,
    OneDnnLinear,
    linear_backward,
    linear_into,
    onednn_applies,
)


def replayable_linears(model: nn.Module) -> dict[str, nn.Linear] | None:
    """The model's linear layers by name, or None when a linear layer is a subclass other
    than `OneDnnLinear` (it may compute more than its weight's product), or when the model
    drops out (the update would draw other masks than the decoding did). peft's LoRA
    layers without dropout replay: the base layer and both adapter matrices inside each
    are plain linear layers, and the wrapper's sum is recomputed like any other op."""
    linears: dict[str, nn.Linear] = {}
    for name, module in model.named_modules():
        dropout = module.p if isinstance(module, nn.Dropout) else 0.0
        if dropout > 0 or float(getattr(module, "attention_dropout", 0.0) or 0.0) > 0:
            return None
        if isinstance(module, nn.Linear):
            if type(module) not in PLAIN_LINEARS:
                return None
            linears[name] = module
    return linears or None


def bytes_per_token(model: nn.Module) -> int:
    """Bytes the recording holds per response token (every linear layer's output)."""
    linears = replayable_linears(model) or {}
    return sum(m.out_features * m.weight.element_size() for m in linears.values())


class _ReplayedLinear(torch.autograd.Function):
    """`x @ weight.T + bias` whose value was recorded: the forward returns it, the backward
    is the linear layer's own (input and weight gradients from the saved input, by the
    layer's kernel: `onednn` for a `OneDnnLinear`, trainer.cpu_speed.onednn_linear)."""

    @staticmethod
    def forward(
        ctx: Any, x: Tensor, weight: Tensor, bias: Tensor | None, output: Tensor, onednn: bool
    ) -> Tensor:
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        ctx.onednn = onednn
        return output

    @staticmethod
    def backward(
        ctx: Any, grad: Tensor
    ) -> tuple[Tensor | None, Tensor | None, Tensor | None, None, None]:
        x, weight = ctx.saved_tensors
        needs = (ctx.needs_input_grad[0], ctx.needs_input_grad[1], ctx.needs_input_grad[2])
        grads = linear_backward(grad, x, weight, needs, ctx.has_bias, ctx.onednn)
        return *grads, None, None


@dataclass
class _Part:
    """The rows of one generate call. `outputs[name]` is (columns * rows + 1, out): the
    outputs of decoding step j sit in rows j * rows ... j * rows + live - 1 of it, in the
    order of the rows still decoding then (so the layer writes them there directly, one
    contiguous block), and its last row stays zero (padding). `slots[j, row]` says where
    `row`'s column j went, or points at the zero row if the row never fed that column."""

    outputs: dict[str, Tensor]
    slots: Tensor  # (columns, rows) long
    rows: int
    start: int = 0  # its first row in the recording

    @property
    def padding(self) -> int:
        return self.slots.shape[0] * self.rows


class LinearOutputs:
    """Every linear layer's output at every decoded position of a rollout (module doc).

    Rows are added per generate call (`add_rows`: a part); column j of a row holds the
    outputs of the forward that fed its response token j, i.e. what a teacher-forced pass
    computes at that position; columns a row never fed (after its last token) replay as
    zeros. While `recording`, each linear layer writes its decoding output straight into
    the recording (no copy). `restart` keeps the memory for the next rollout (fresh pages
    cost a page fault each)."""

    def __init__(self, model: nn.Module, columns: int, max_bytes: int) -> None:
        linears = replayable_linears(model)
        if linears is None:
            raise ValueError(
                "the model cannot replay: a linear layer is not a plain one, or it drops out"
            )
        self.model = model
        self.linears = linears
        self.columns = columns
        self._row_bytes = columns * bytes_per_token(model)
        self._spare: list[_Part] = []  # parts of an earlier rollout, for reuse
        self._parts: list[_Part] = []
        self.rows = 0
        # Set while decoding: where the next forward's outputs go (a part, a column, rows).
        self._target: tuple[_Part, int, int] | None = None
        self.max_bytes = max_bytes
        self.versions: list[int] = self._versions()

    def restart(self, max_bytes: int) -> None:
        """Start a new rollout's recording (the weights of now), reusing earlier memory."""
        self.release()
        self.max_bytes = max_bytes
        self.versions = self._versions()

    def release(self) -> None:
        """Forget the recorded outputs; replay is refused from then on. The memory is kept
        for the next `restart`."""
        self._spare += self._parts
        self._parts, self.rows, self.versions = [], 0, []
        self._target = None

    def _versions(self) -> list[int]:
        return [p._version for p in self.model.parameters()]

    def fresh_for(self, model: nn.Module) -> bool:
        """True while `model` is the recorded one and no parameter was written since."""
        return bool(self.versions) and model is self.model and self._versions() == self.versions

    def add_rows(self, rows: int) -> tuple[int, int] | None:
        """Room for `rows` more rows (a new part); returns (part, its first row), or None
        when they would take the recording past `max_bytes`."""
        if (self.rows + rows) * self._row_bytes > self.max_bytes:
            return None
        reusable = [p for p in self._spare if p.rows == rows]
        if reusable:
            part = reusable[0]
            self._spare.remove(part)
        else:
            with torch.inference_mode(False):  # ordinary tensors: the update reads them
                outputs = {}
                for name, m in self.linears.items():
                    outputs[name] = m.weight.new_empty((self.columns * rows + 1, m.out_features))
                    outputs[name][-1] = 0  # the padding row
                slots = torch.empty((self.columns, rows), dtype=torch.long)
            part = _Part(outputs, slots.to(m.weight.device), rows)
        part.slots.fill_(part.padding)
        part.start = self.rows
        self._parts.append(part)
        self.rows += rows
        return len(self._parts) - 1, part.start

    @contextmanager
    def recording(self) -> Iterator[None]:
        """Inside, each linear layer writes its output into the recording while `target`
        says where (a decoding step), and computes as usual otherwise (a prefill)."""
        patched: list[nn.Linear] = []
        try:
            for name, module in self.linears.items():
                module.forward = self._recording_forward(name, module)  # type: ignore[method-assign]
                patched.append(module)
            yield
        finally:
            self._target = None
            for module in patched:
                del module.forward

    def _recording_forward(self, name: str, module: nn.Linear) -> Any:
        own_forward = type(module).forward

        def forward(x: Tensor) -> Tensor:
            if self._target is None:
                return own_forward(module, x)
            part, column, live = self._target
            start = column * part.rows
            out = part.outputs[name][start : start + live]
            flat = x.reshape(live, x.shape[-1])  # one new token per live row
            onednn = isinstance(module, OneDnnLinear) and onednn_applies(flat, module.weight)
            linear_into(out, flat, module.weight, module.bias, onednn)
            return out.view(*x.shape[:-1], out.shape[-1])

        return forward

    def target(self, part: int, rows: Tensor, column: int) -> None:
        """Record the next forward (one new token for each of `part`'s `rows`, local
        indices in the order of the forward's batch) at `column`."""
        if column >= self.columns:
            self._target = None
            return
        chosen = self._parts[part]
        live = len(rows)
        positions = torch.arange(live, device=chosen.slots.device) + column * chosen.rows
        chosen.slots[column, rows.to(chosen.slots.device)] = positions
        self._target = (chosen, column, live)

    def stop(self) -> None:
        """Record nothing from the next forwards (a prefill)."""
        self._target = None

    def _sources(self, rows: Tensor, width: int) -> list[tuple[_Part, Tensor, Tensor]]:
        """For each part holding some of `rows`: (part, which of `rows`, their (n, width)
        indices into the part's outputs)."""
        sources = []
        for part in self._parts:
            inside = ((rows >= part.start) & (rows < part.start + part.rows)).nonzero()[:, 0]
            if len(inside):
                local = rows[inside] - part.start
                sources.append((part, inside, part.slots[:width, local].t()))
        return sources

    def gather(self, name: str, rows: Tensor, width: int) -> Tensor:
        """(len(rows), width, out) outputs of `name` for recording rows `rows` (zeros where
        a row fed no token)."""
        return self._gather(name, self._sources(rows.cpu(), width), len(rows), width)

    def _gather(
        self, name: str, sources: list[tuple[_Part, Tensor, Tensor]], count: int, width: int
    ) -> Tensor:
        if len(sources) == 1 and len(sources[0][1]) == count:  # in order: one copy, no scatter
            part, _, index = sources[0]
            out = part.outputs[name]
            return out.index_select(0, index.reshape(-1)).view(count, width, out.shape[-1])
        first = sources[0][0].outputs[name]
        picked = first.new_empty((count, width, first.shape[-1]))
        for part, inside, index in sources:
            out = part.outputs[name]
            picked[inside] = out.index_select(0, index.reshape(-1)).view(-1, width, out.shape[-1])
        return picked

    @contextmanager
    def replaying(self, model: nn.Module, rows: Tensor, width: int) -> Iterator[None]:
        """Inside, `model`'s forward over the responses of recording rows `rows` (their
        first `width` tokens) takes every linear layer's output from the recording."""
        if not self.fresh_for(model):
            raise RuntimeError("the weights changed since the rollout: nothing to replay")
        sources = self._sources(rows.cpu(), width)
        patched: list[nn.Linear] = []
        try:
            for name, module in self.linears.items():
                weight, bias = module.weight, module.bias
                onednn_kernel = isinstance(module, OneDnnLinear)

                # Gathered when the layer is called, not all up front: the element-wise
                # work that follows then reads it from cache (gathering every layer's
                # outputs first made the update's norms and activations read from memory).
                def forward(
                    x: Tensor,
                    name: str = name,
                    weight: Tensor = weight,
                    bias: Tensor | None = bias,
                    onednn_kernel: bool = onednn_kernel,
                ) -> Tensor:
                    output = self._gather(name, sources, len(rows), width)
                    onednn = onednn_kernel and onednn_applies(x, weight)
                    return _ReplayedLinear.apply(x, weight, bias, output, onednn)

                module.forward = forward  # type: ignore[method-assign,assignment]
                patched.append(module)
            yield
        finally:
            for module in patched:
                del module.forward

"""Replaying the rollout's linear-layer outputs in the update: the forward is not multiplied twice.

With one optimizer step per batch (GRPO's usual setting: one epoch, one mini-batch), the
update's forward runs the very weights that sampled the batch, on the very tokens: every
linear layer's output at every response position was already computed while decoding.
The HF engine records those outputs (`LinearOutputs.recording`, forward hooks on the
model's `nn.Linear` modules); the update's response pass replays them
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

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn

from trainer.config.schema import RunConfig

# Ceiling of one rollout's recording: every linear output of every response token (the
# long128 bench, 64 x 127 tokens of a 25M model, takes 1.4 GB; a 0.5B model would take
# ~1.2 MB a token). Past it the rollout records nothing and the update multiplies.
MAX_RECORDING_BYTES = 8 * 2**30


def recording_budget(cfg: RunConfig) -> int:
    """Bytes a rollout may record for the update to replay; 0 when the run's update cannot
    replay: more than one optimizer step per batch (the weights move), multi-turn episodes
    (tool tokens are prefilled, not decoded), block-packed scoring, or several workers."""
    actor = cfg.actor
    if not (
        actor.replay_rollout_outputs
        and actor.ppo_epochs == 1
        and actor.ppo_mini_batch_size >= cfg.data.train_batch_size
        and actor.pack_shared_prompts
        and actor.shared_prefix_scoring
        and not cfg.rollout.multi_turn.enabled
        and cfg.resources.num_workers == 1
    ):
        return 0
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return min(MAX_RECORDING_BYTES, memory // 4)


def replayable_linears(model: nn.Module) -> dict[str, nn.Linear] | None:
    """The model's linear layers by name, or None when a layer is not a plain `nn.Linear`
    (LoRA adapters and other wrappers compute more than their weight's product)."""
    linears: dict[str, nn.Linear] = {}
    for name, module in model.named_modules():
        if isinstance(module, nn.Linear):
            if type(module) is not nn.Linear:
                return None
            linears[name] = module
    return linears or None


def bytes_per_token(model: nn.Module) -> int:
    """Bytes the recording holds per response token (every linear layer's output)."""
    linears = replayable_linears(model) or {}
    return sum(m.out_features * m.weight.element_size() for m in linears.values())


class _ReplayedLinear(torch.autograd.Function):
    """`x @ weight.T + bias` whose value was recorded: the forward returns it, the backward
    is the linear layer's own (input and weight gradients from the saved input)."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, weight: Tensor, bias: Tensor | None, output: Tensor) -> Tensor:
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        return output

    @staticmethod
    def backward(
        ctx: Any, grad: Tensor
    ) -> tuple[Tensor | None, Tensor | None, Tensor | None, None]:
        x, weight = ctx.saved_tensors
        grad_x = grad @ weight if ctx.needs_input_grad[0] else None
        flat_grad = grad.reshape(-1, grad.shape[-1])
        grad_w = flat_grad.t() @ x.reshape(-1, x.shape[-1]) if ctx.needs_input_grad[1] else None
        grad_b = flat_grad.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] else None
        return grad_x, grad_w, grad_b, None


class LinearOutputs:
    """Every linear layer's output at every decoded position of a rollout (module doc).

    Rows are added per generate call (`add_rows`: a part); column j of a row holds the
    outputs of the forward that fed its response token j, i.e. what a teacher-forced pass
    computes at that position. Columns a row never fed (after its last token) are never
    written, and replay zeroes them. A part is stored column-major, (columns, rows, out):
    each decoding step then writes one contiguous block per layer. `restart` keeps the
    memory for the next rollout (fresh pages cost a page fault each)."""

    def __init__(self, model: nn.Module, columns: int, max_bytes: int) -> None:
        linears = replayable_linears(model)
        if linears is None:
            raise ValueError("the model has linear layers that are not plain nn.Linear")
        self.model = model
        self.linears = linears
        self.columns = columns
        self._row_bytes = columns * bytes_per_token(model)
        self._spare: list[dict[str, Tensor]] = []  # parts of an earlier rollout, for reuse
        self._parts: list[dict[str, Tensor]] = []
        self._starts: list[int] = []  # first row of each part
        self.rows = 0
        self.versions: list[int] = []
        # Set while decoding: where the next forward's outputs go (a part, its rows, a column).
        self._target: tuple[dict[str, Tensor], Tensor, int] | None = None
        self.max_bytes = max_bytes
        self.versions = self._versions()

    def restart(self, max_bytes: int) -> None:
        """Start a new rollout's recording (the weights of now), reusing earlier memory."""
        self.release()
        self.max_bytes = max_bytes
        self.versions = self._versions()

    def release(self) -> None:
        """Forget the recorded outputs; replay is refused from then on. The memory is kept
        for the next `restart`."""
        self._spare += self._parts
        self._parts, self._starts, self.rows, self.versions = [], [], 0, []
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
        reusable = [p for p in self._spare if next(iter(p.values())).shape[1] == rows]
        if reusable:
            part = reusable[0]
            self._spare.remove(part)
        else:
            with torch.inference_mode(False):  # ordinary tensors: the update reads them
                part = {
                    name: m.weight.new_empty((self.columns, rows, m.out_features))
                    for name, m in self.linears.items()
                }
        self._parts.append(part)
        self._starts.append(self.rows)
        first, self.rows = self.rows, self.rows + rows
        return len(self._parts) - 1, first

    @contextmanager
    def recording(self) -> Iterator[None]:
        """Hooks that copy each linear layer's output while `target` says where."""
        handles = [
            module.register_forward_hook(self._hook(name)) for name, module in self.linears.items()
        ]
        try:
            yield
        finally:
            self._target = None
            for handle in handles:
                handle.remove()

    def target(self, part: int, rows: Tensor, column: int) -> None:
        """Record the next forward (one new token per row) into `part`'s `rows` (local
        indices) at `column`."""
        self._target = (self._parts[part], rows, column) if column < self.columns else None

    def stop(self) -> None:
        """Record nothing from the next forwards (a prefill)."""
        self._target = None

    def _hook(self, name: str) -> Any:
        def hook(module: nn.Module, inputs: Any, output: Tensor) -> None:
            if self._target is not None:
                part, rows, column = self._target
                part[name][column].index_copy_(0, rows, output[:, -1])

        return hook

    def gather(self, name: str, rows: Tensor, width: int, valid: Tensor) -> Tensor:
        """(len(rows), width, out) outputs of `name` for recording rows `rows`, zero where
        `valid` (rows, width) is 0."""
        parts = [part[name] for part in self._parts]
        rows = rows.to(parts[0].device)
        if len(parts) == 1:
            picked = parts[0].transpose(0, 1)[rows, :width]
        else:
            picked = parts[0].new_empty((len(rows), width, parts[0].shape[-1]))
            for part, start in zip(parts, self._starts, strict=True):
                inside = ((rows >= start) & (rows < start + part.shape[1])).nonzero().squeeze(1)
                picked[inside] = part.transpose(0, 1)[rows[inside] - start, :width]
        return picked.masked_fill_(~valid.bool()[..., None], 0)

    @contextmanager
    def replaying(
        self, model: nn.Module, rows: Tensor, width: int, valid: Tensor
    ) -> Iterator[None]:
        """Inside, `model`'s forward over responses `rows`' first `width` tokens (`valid`:
        their attention mask) takes every linear layer's output from the recording."""
        if not self.fresh_for(model):
            raise RuntimeError("the weights changed since the rollout: nothing to replay")
        patched: list[nn.Linear] = []
        try:
            for name, module in self.linears.items():
                weight, bias = module.weight, module.bias

                # Gathered when the layer is called, not all up front: the element-wise
                # work that follows then reads it from cache (gathering every layer's
                # outputs first made the update's norms and activations read from memory).
                def forward(
                    x: Tensor,
                    name: str = name,
                    weight: Tensor = weight,
                    bias: Tensor | None = bias,
                ) -> Tensor:
                    output = self.gather(name, rows, width, valid)
                    return _ReplayedLinear.apply(x, weight, bias, output)

                module.forward = forward  # type: ignore[method-assign,assignment]
                patched.append(module)
            yield
        finally:
            for module in patched:
                del module.forward


@dataclass(frozen=True)
class ReplayRow:
    """Where a completion's linear outputs are: its recording and its row there."""

    outputs: LinearOutputs
    row: int

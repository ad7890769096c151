"""A KV cache that grows in place, for the HF engine's token-by-token decoding.

transformers' `DynamicLayer` appends each new token with `torch.cat`, which copies the
whole cache of the layer at every step: decoding R tokens copies O(R * (P + R)) key and
value rows per layer, and for long completions that copying outgrows the matmuls (a
profile of 64 rows x 32 new tokens on the 25M bench model spent a third of its time in
`aten::cat`). `PreallocatedLayer` keeps keys and values in a buffer sized for the whole
completion and writes each step's token into the next free column; attention reads a view
of the filled part. Values are bit-identical to the dynamic cache's.
"""

from __future__ import annotations

import itertools

import torch
from transformers.cache_utils import Cache, DynamicLayer


class PreallocatedLayer(DynamicLayer):
    """`DynamicLayer` over a buffer of `capacity` positions (it grows, doubling, if
    a sequence outruns it). `keys`/`values` are views of the filled columns."""

    def __init__(self, keys: torch.Tensor, values: torch.Tensor, capacity: int) -> None:
        super().__init__()
        self.dtype, self.device = keys.dtype, keys.device
        self.length = keys.shape[-2]
        self._keys = self._buffer(keys, max(capacity, self.length))
        self._values = self._buffer(values, max(capacity, self.length))
        self.is_initialized = True
        self._refresh()

    @staticmethod
    def _buffer(states: torch.Tensor, capacity: int) -> torch.Tensor:
        batch, heads, length, dim = states.shape
        buffer = states.new_empty((batch, heads, capacity, dim))
        buffer[:, :, :length] = states
        return buffer

    def _refresh(self) -> None:
        self.keys = self._keys[:, :, : self.length]
        self.values = self._values[:, :, : self.length]

    def _filled(self) -> tuple[torch.Tensor, torch.Tensor]:
        return self._keys[:, :, : self.length], self._values[:, :, : self.length]

    def update(
        self, key_states: torch.Tensor, value_states: torch.Tensor, *args: object, **kwargs: object
    ) -> tuple[torch.Tensor, torch.Tensor]:
        new = key_states.shape[-2]
        end = self.length + new
        if end > self._keys.shape[-2]:  # outgrown: double, amortised O(1) per token
            capacity = max(end, 2 * self._keys.shape[-2])
            keys, values = self._filled()
            self._keys = self._buffer(keys, capacity)
            self._values = self._buffer(values, capacity)
        self._keys[:, :, self.length : end] = key_states
        self._values[:, :, self.length : end] = value_states
        self.length = end
        self._refresh()
        return self._filled()

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        keep = indices.tolist()
        if all(a < b for a, b in itertools.pairwise(keep)):
            self._compact(keep)
        else:  # a reordering or repeating selection: gather into a new buffer
            keys, values = self._filled()
            capacity = self._keys.shape[-2]
            self._keys = self._buffer(keys[indices], capacity)
            self._values = self._buffer(values[indices], capacity)
        self._refresh()

    def _compact(self, keep: list[int]) -> None:
        """Keep the rows `keep` (strictly increasing) by moving each one down in place.

        Dropping finished rows happens many times in a long completion; gathering into a
        fresh buffer moved every kept row (twice, or the whole buffer once) and was a
        tenth of decoding. Here rows before the first dropped one stay put and the rest
        move once, filled columns only. Row `src` moves to `dst <= src` in increasing
        order, so no row is overwritten before it has been read."""
        for buffer in (self._keys, self._values):
            for dst, src in enumerate(keep):
                if src != dst:
                    buffer[dst, :, : self.length].copy_(buffer[src, :, : self.length])
        self._keys = self._keys[: len(keep)]
        self._values = self._values[: len(keep)]

    def crop(self, tokens_to_remove: int) -> None:
        if tokens_to_remove > 0:
            raise ValueError("crop takes a negative number of tokens to remove")
        self.length = max(0, self.length + tokens_to_remove)
        self._refresh()

    def reset(self) -> None:
        self.length = 0
        self._refresh()


def preallocate(cache: Cache, capacity: int) -> Cache:
    """Swap each plain `DynamicLayer` of `cache` (after a prefill) for a `PreallocatedLayer`
    of `capacity` positions; other layer kinds (sliding windows, ...) stay as they are."""
    layers = list(cache.layers)
    for index, layer in enumerate(cache.layers):
        if type(layer) is not DynamicLayer or not isinstance(layer, DynamicLayer):
            continue
        keys, values = layer.keys, layer.values
        if layer.is_initialized and keys is not None and values is not None:
            layers[index] = PreallocatedLayer(keys, values, capacity)
    cache.layers = layers
    return cache

"""`ResumableSampler`: batches of dataset indices that a resumed run continues exactly.

The order of epoch e is a permutation drawn from a generator seeded with
(seed, e) alone, so it never depends on what ran before; the state is just
(epoch, position), saved with each checkpoint.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np


class ResumableSampler:
    """Yields lists of indices in [0, num_items), `batch_size` at a time.

    `next_batch()` crosses epoch boundaries by itself; iterating yields the rest
    of the current epoch. The state advances when a batch is handed out, so a
    `state_dict()` taken after k batches resumes at batch k + 1.
    """

    def __init__(
        self,
        num_items: int,
        batch_size: int,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = True,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if num_items < 1:
            raise ValueError("the dataset is empty: the sampler needs at least one item")
        if drop_last and num_items < batch_size:
            raise ValueError(
                f"a batch of {batch_size} prompts needs at least {batch_size} items but the "
                f"dataset has {num_items}; lower data.train_batch_size"
            )
        self.num_items = num_items
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.drop_last = drop_last
        self.epoch = 0
        self.position = 0  # batches of `epoch` already handed out
        self._order_epoch = -1
        self._order: list[int] = []

    @property
    def steps_per_epoch(self) -> int:
        if self.drop_last:
            return self.num_items // self.batch_size
        return -(-self.num_items // self.batch_size)

    def epoch_order(self, epoch: int) -> list[int]:
        """The item order of `epoch` (a pure function of seed and epoch)."""
        if epoch != self._order_epoch:
            if self.shuffle:
                rng = np.random.Generator(np.random.PCG64([self.seed, epoch]))
                self._order = rng.permutation(self.num_items).tolist()
            else:
                self._order = list(range(self.num_items))
            self._order_epoch = epoch
        return self._order

    def next_batch(self) -> list[int]:
        start = self.position * self.batch_size
        batch = self.epoch_order(self.epoch)[start : start + self.batch_size]
        self.position += 1
        if self.position >= self.steps_per_epoch:
            self.epoch += 1
            self.position = 0
        return batch

    def __iter__(self) -> Iterator[list[int]]:
        epoch = self.epoch
        while self.epoch == epoch:
            yield self.next_batch()

    def __len__(self) -> int:
        return self.steps_per_epoch

    def state_dict(self) -> dict[str, int]:
        return {"epoch": self.epoch, "position": self.position}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        epoch, position = state["epoch"], state["position"]
        if not (isinstance(epoch, int) and epoch >= 0):
            raise ValueError(f"sampler state: epoch must be an int >= 0, got {epoch!r}")
        if not (isinstance(position, int) and 0 <= position < self.steps_per_epoch):
            raise ValueError(
                f"sampler state: position {position!r} is outside [0, {self.steps_per_epoch}) "
                "for this dataset and batch size; was the dataset or batch size changed?"
            )
        self.epoch, self.position = epoch, position

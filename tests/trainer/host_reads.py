"""A probe for the operators that make the host wait for the device, for tests of code
meant to run on a GPU without stalls (a CUDA graph's capture refuses them outright)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from torch.utils._python_dispatch import TorchDispatchMode


class HostReads(TorchDispatchMode):
    """Counts, while active, the operators that read a value to the host (`.item()`,
    `bool()`, `float()`) or whose output's shape depends on the data. On the CPU, where
    these tests run, such a read costs nothing; on a GPU each waits for every kernel
    queued before it."""

    WAITS = frozenset({"_local_scalar_dense", "nonzero", "masked_select", "is_nonzero", "equal"})

    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter[str] = Counter()

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        name = func.overloadpacket.__name__
        if name in self.WAITS or name.startswith("unique"):
            self.counts[name] += 1
        return func(*args, **(kwargs or {}))

"""A model's response forwards may reuse what its rollout computed for the same rows.

A converter installs a `ForwardReuse` on the module it converted
(trainer.models.converters: the CPU replay of linear outputs); the update's shared-prefix
pass wraps each response forward in `reusing(model, sample_ids, width)`, which is a
no-op for a module with nothing installed. Keyed weakly by module, so a model that is
dropped takes its reuse with it and the module itself carries no extra attribute.
"""

from __future__ import annotations

import weakref
from contextlib import AbstractContextManager, nullcontext
from typing import Protocol

from torch import Tensor, nn


class ForwardReuse(Protocol):
    def reusing(
        self, model: nn.Module, sample_ids: Tensor, width: int
    ) -> AbstractContextManager[None]:
        """Around `model`'s forward over the step's rows `sample_ids` (their first `width`
        response tokens): reuse what still applies, nothing once the weights moved."""
        ...


_INSTALLED: weakref.WeakKeyDictionary[nn.Module, ForwardReuse] = weakref.WeakKeyDictionary()


def install_forward_reuse(model: nn.Module, reuse: ForwardReuse) -> None:
    _INSTALLED[model] = reuse


def reusing(
    model: nn.Module, sample_ids: Tensor | None, width: int
) -> AbstractContextManager[None]:
    """The installed reuse around this forward, or nothing."""
    reuse = _INSTALLED.get(model)
    if reuse is None or sample_ids is None:
        return nullcontext()
    return reuse.reusing(model, sample_ids, width)

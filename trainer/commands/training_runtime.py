"""Where a run trains: this process, or Ray worker groups (`trainer.distributed`).

Kept apart from `trainer.training.roles` (the interface both runtimes implement), so the roles
never import the distributed runtime that builds on them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from trainer.config.schema import RunConfig
from trainer.distributed import uses_distributed
from trainer.reporting import startup
from trainer.reporting.base import Reporter
from trainer.training.roles import Runtime, local_runtime


@contextmanager
def open_runtime(cfg: RunConfig, reporter: Reporter) -> Iterator[Runtime]:
    """The distributed runtime when the run asks for several workers or a GPU worker
    (`trainer.distributed.uses_distributed`), else this process; closed on exit."""
    if not uses_distributed(cfg):
        runtime = local_runtime(cfg)
        startup.mark("model_loaded")
        try:
            yield runtime
        finally:
            runtime.state.scorer.close()  # the sandbox pool's zygotes
        return
    from trainer.distributed.runtime import distributed_runtime  # ray, only when used

    with distributed_runtime(cfg, reporter) as runtime:
        startup.mark("model_loaded")
        yield runtime

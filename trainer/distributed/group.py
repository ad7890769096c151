"""Groups of Ray actors, one per rank, each group in a placement group of its own.

`ActorGroup` is what every group shares: its workers placed from a `WorkerResources`
request, calls to all ranks at once awaited with a deadline (the first rank to die or
raise fails the whole call at once, naming the rank, its process and the phase, instead
of leaving the other ranks blocked in a collective), and closing (the actors killed,
the placement group freed). `WorkerGroup` is the trainer's group of `PolicyWorker`
FSDP2 ranks; the reward model's group is `trainer.distributed.reward_group`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
from collections.abc import Callable
from typing import Any, Literal

import psutil
import ray
from ray.exceptions import GetTimeoutError, RayActorError, RayTaskError
from ray.util.placement_group import PlacementGroup, placement_group, remove_placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

from trainer.config.resources_section import WorkerResources
from trainer.config.schema import RunConfig
from trainer.distributed import crash_evidence
from trainer.distributed.worker import PolicyWorker, WorkerInfo

log = logging.getLogger(__name__)

# The longest one `ray.wait` blocks. A Python signal handler's exception (Ctrl-C,
# pytest-timeout's) does not end Ray's wait: it surfaced only when the wait returned, so
# a hung phase held its caller for the whole worker timeout (30 min in a CI run).
WAIT_SLICE_S = 1.0
# After asking the late workers for their stacks: Ray's log monitor forwards a worker's
# log to the driver's output within about a second; the run is torn down after this.
STACKS_FORWARD_S = 3.0
# How long a late worker asked to dump core (crash_evidence) is given to write it: the
# kernel writes its resident memory, and a model's weights are most of that.
CORE_WRITE_S = 120.0

Strategy = Literal["PACK", "SPREAD", "STRICT_PACK", "STRICT_SPREAD"]


class WorkerFailed(RuntimeError):
    """A worker died, raised or did not answer in time: the run cannot go on."""


def worker_bundle(res: WorkerResources) -> dict[str, float]:
    bundle = {"CPU": res.cpus_per_worker, "memory": float(int(res.memory_gb * 2**30))}
    if res.gpus_per_worker:
        bundle["GPU"] = res.gpus_per_worker
    return bundle


def check_cluster_fits(
    res: WorkerResources, available: dict[str, float], section: str = "resources"
) -> None:
    """Fail at once, naming the fields (under `section`), when the cluster could never
    hold the workers."""
    fields = {"CPU": "cpus_per_worker", "GPU": "gpus_per_worker", "memory": "memory_gb"}
    for resource, amount in worker_bundle(res).items():
        needed, has = amount * res.num_workers, available.get(resource, 0.0)
        if needed > has:
            unit = 2**30 if resource == "memory" else 1
            raise WorkerFailed(
                f"{section}.num_workers={res.num_workers} x {section}.{fields[resource]}="
                f"{amount / unit:g} needs {needed / unit:g} {resource}"
                f"{' GiB' if unit > 1 else ''}; the Ray cluster has {has / unit:g} in total"
            )


def place_workers(
    res: WorkerResources, timeout_s: float, strategy: Strategy, section: str = "resources"
) -> PlacementGroup:
    check_cluster_fits(res, ray.cluster_resources(), section)
    if res.gpus_per_worker and res.gpus_per_worker != int(res.gpus_per_worker):
        raise WorkerFailed(
            f"{section}.gpus_per_worker={res.gpus_per_worker:g}: a worker needs whole GPUs "
            "(NCCL needs a whole GPU per rank); use 1 (or 0 for CPU workers)"
        )
    group = placement_group([worker_bundle(res)] * res.num_workers, strategy=strategy)
    ready, _ = ray.wait([group.ready()], timeout=min(10.0, timeout_s))
    if not ready:  # say why the run is not starting instead of waiting in silence
        log.warning(
            "waiting for Ray to place %d workers of %s (free now: %s); a Ray job that "
            "reserved the whole request for its entrypoint leaves no room for them",
            res.num_workers,
            worker_bundle(res),
            ray.available_resources(),
        )
        ready, _ = ray.wait([group.ready()], timeout=max(0.0, timeout_s - 10.0))
    if not ready:
        remove_placement_group(group)
        raise WorkerFailed(
            f"Ray could not place {res.num_workers} workers of {worker_bundle(res)} within "
            f"resources.worker_timeout_s={timeout_s:g} s (strategy "
            f"{strategy}); free now: {ray.available_resources()}"
        )
    return group


class ActorGroup:
    """`actor_class(*args_of(rank))` on every rank, in one placement group (module
    docstring). `role` names its workers in errors and logs."""

    def __init__(
        self,
        actor_class: type,
        args_of: Callable[[int], tuple[Any, ...]],
        res: WorkerResources,
        timeout_s: float,
        strategy: Strategy,
        section: str = "resources",
        role: str = "worker",
    ) -> None:
        self.timeout_s = timeout_s
        self.role = role
        self.actor_title = f"ray::{actor_class.__name__}"  # Ray's process title for it
        self.placement = place_workers(res, timeout_s, strategy, section)
        remote: Any = ray.remote(actor_class)  # ray's stubs cannot type actor methods
        self.workers: list[Any] = [
            remote.options(
                num_cpus=res.cpus_per_worker,
                num_gpus=res.gpus_per_worker,
                memory=int(res.memory_gb * 2**30),
                scheduling_strategy=PlacementGroupSchedulingStrategy(
                    self.placement, placement_group_bundle_index=rank
                ),
            ).remote(*args_of(rank))
            for rank in range(res.num_workers)
        ]
        self.infos: list[WorkerInfo] = []

    @property
    def size(self) -> int:
        return len(self.workers)

    def call(self, method: str, *args: Any, phase: str | None = None) -> list[Any]:
        """`method(*args)` on every rank; the results in rank order."""
        refs = [getattr(w, method).remote(*args) for w in self.workers]
        return self._wait(refs, phase or method)

    def call_each(
        self, method: str, args: list[tuple[Any, ...]], phase: str | None = None
    ) -> list[Any]:
        """`method(*args[rank])` on every rank; the results in rank order."""
        refs = [getattr(w, method).remote(*a) for w, a in zip(self.workers, args, strict=True)]
        return self._wait(refs, phase or method)

    def describe(self, rank: int) -> str:
        if rank < len(self.infos):
            info = self.infos[rank]
            return f"{self.role} rank {rank} (pid {info.pid} on {info.node_ip}, {info.device})"
        return f"{self.role} rank {rank}"

    def _wait(self, refs: list[Any], phase: str) -> list[Any]:
        deadline = time.monotonic() + self.timeout_s
        pending = {ref: rank for rank, ref in enumerate(refs)}
        while pending:
            left = deadline - time.monotonic()
            wait_s = max(0.0, min(left, WAIT_SLICE_S))
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=wait_s)
            if not ready and left > WAIT_SLICE_S:
                continue
            if not ready:
                late = sorted(pending.values())
                described = ", ".join(self.describe(r) for r in late)
                raise self._failed(
                    f"{phase}: no answer within resources.worker_timeout_s="
                    f"{self.timeout_s:g} s from {described}{self._ask_for_stacks(late)}"
                )
            rank = pending.pop(ready[0])
            try:
                ray.get(ready[0], timeout=0)
            except RayActorError as exc:
                raise self._failed(
                    f"{self.describe(rank)} died during {phase} (process killed or crashed): "
                    f"{str(exc).splitlines()[0]}"
                ) from exc
            except RayTaskError as exc:
                raise self._failed(
                    f"{self.describe(rank)} failed during {phase}: "
                    f"{type(exc.cause).__name__}: {exc.cause}"
                ) from exc
            except GetTimeoutError as exc:  # cannot happen for a ready ref; be explicit
                raise self._failed(f"{self.describe(rank)}: result of {phase} lost") from exc
        return [ray.get(ref) for ref in refs]

    def _ask_for_stacks(self, ranks: list[int]) -> str:
        """Ask each late rank on this node to write its threads' stacks to its log
        (crash_evidence.STACKS_SIGNAL), which Ray forwards to the run's output, then make
        those that ask for cores dump one; what to add to the failure's message. A rank on
        another node is not asked: its pid means nothing here."""
        here = ray.util.get_node_ip_address()
        asked: dict[int, psutil.Process] = {}
        stopped = []
        for rank in ranks:
            info = self.infos[rank] if rank < len(self.infos) else None
            if info is None or info.node_ip != here:
                continue
            with contextlib.suppress(psutil.Error, OSError, IndexError):
                process = psutil.Process(info.pid)
                # The pid must still be that worker (a title of ours): the signal's
                # default action ends a process that has no handler for it.
                if not process.cmdline()[0].startswith(self.actor_title):
                    continue
                if process.status() in (psutil.STATUS_STOPPED, psutil.STATUS_TRACING_STOP):
                    stopped.append(str(rank))  # it would write only once continued
                    continue
                os.kill(info.pid, crash_evidence.STACKS_SIGNAL)
                asked[rank] = process
        said = ""
        if asked:
            time.sleep(STACKS_FORWARD_S)
            said = f"; their threads' stacks are in the run's log (rank {_ranks(asked)})"
            said += _dump_cores(asked)
        return said + (
            f"; rank {', '.join(stopped)} is stopped (SIGSTOP or a debugger)" if stopped else ""
        )

    def _failed(self, message: str) -> WorkerFailed:
        # Logged at once: stopping the other workers and Ray takes a while longer.
        log.error("%s; stopping the other workers", message)
        return WorkerFailed(message)

    def close(self) -> None:
        """Kill every worker (a rank stuck in a collective included) and free the GPUs."""
        for worker in self.workers:
            try:
                ray.kill(worker, no_restart=True)
            except Exception as exc:  # already gone: nothing to free
                log.debug("killing a worker: %s", exc)
        remove_placement_group(self.placement)


def _ranks(processes: dict[int, psutil.Process]) -> str:
    return ", ".join(str(rank) for rank in processes)


def _dump_cores(late: dict[int, psutil.Process]) -> str:
    """Make each late worker that asks for cores (crash_evidence) dump one, and wait while
    the kernel writes them: the group's close kills what is left, and a kill cuts a core
    short. What to add to the failure's message ("" where none asks)."""
    dumping: dict[int, psutil.Process] = {}
    for rank, process in late.items():
        with contextlib.suppress(psutil.Error, OSError):
            if crash_evidence.asks_for_cores(process.environ()):
                # SIGQUIT, whose default action dumps core with no handler of Python's,
                # faulthandler's or Ray's in between: Ray's logs through `new`, which
                # would deadlock on the arena lock of a thread stuck inside malloc.
                process.send_signal(signal.SIGQUIT)
                dumping[rank] = process
    if not dumping:
        return ""
    deadline = time.monotonic() + CORE_WRITE_S
    writing = dict(dumping)
    while writing and time.monotonic() < deadline:
        time.sleep(0.2)
        writing = {rank: p for rank, p in writing.items() if not _ended(p)}
    said = f"; rank {_ranks(dumping)} was made to dump core"
    if writing:
        said += f" (rank {_ranks(writing)} still writing it after {CORE_WRITE_S:g} s)"
    return said


def _ended(process: psutil.Process) -> bool:
    """Gone, or a zombie: the kernel writes a core before the process becomes one."""
    try:
        return process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


class WorkerGroup(ActorGroup):
    """The trainer's `PolicyWorker` ranks, joined in one torch.distributed group."""

    def __init__(self, cfg: RunConfig) -> None:
        res = cfg.resources
        config = cfg.model_dump(mode="json")
        super().__init__(
            PolicyWorker,
            lambda rank: (config, rank, res.num_workers),
            res,
            res.worker_timeout_s,
            res.placement_strategy,
        )
        try:
            address, port = self._wait([self.workers[0].rendezvous.remote()], "start-up")[0]
            # All ranks at once: gloo/nccl rendezvous blocks until every rank has joined.
            self.infos = self.call("setup", address, port, phase="start-up")
        except BaseException:
            self.close()
            raise

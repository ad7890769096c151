"""`SandboxPool`: run untrusted reward code in hardened, throwaway processes.

Each worker is a warm zygote (see `zygote`) that forks a hardened template per chunk of
requests (see `child`), which forks a fresh process per request (see `call`): the only
place user code runs. A call has no network (its own network namespace, seccomp refusing
every socket but a socketpair, Landlock refusing TCP), runs as a uid of its own per
worker, can write only to its own scratch directory (Landlock, size-capped tmpfs) and
read only system libraries and the Python install, has rlimits on CPU, address space,
file size, processes and open files, and lives in a PID namespace so nothing it starts
outlives it. Every failure becomes an error `RewardResult`; a dead zygote is restarted.
Used by the trainer and the studio.
"""

from __future__ import annotations

import logging
import math
import os
import selectors
import tempfile
import threading
import time
import weakref
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trainer.config.reward_kwargs import kwargs_problem
from trainer.rewards.contract import (
    RewardRequest,
    RewardResult,
    error_result,
    scored_alone,
)
from trainer.rewards.errors import SandboxUnavailableError
from trainer.rewards.loader import (
    RewardCodeError,
    check_source,
)
from trainer.rewards.sandbox import wire
from trainer.rewards.sandbox.limits import SandboxLimits
from trainer.rewards.sandbox.worker import GRACE_S, Worker, shutdown

if TYPE_CHECKING:
    pass

logger = logging.getLogger(__name__)

__all__ = [
    "SandboxLimits",
    "SandboxPool",
    "SandboxUnavailableError",
    "isolation_report",
]


class SandboxPool:
    """A `RewardScorer` running ``code`` in ``workers`` sandboxed zygotes.

    Raises `RewardCodeError` when the code is invalid (checked statically, then loaded
    once in a sandboxed child), and `SandboxUnavailableError` when the sandbox cannot
    start, or lacks any protection (see `child.PROTECTIONS`). A weaker sandbox runs only
    when asked for: ``require_full_isolation=False``, or, when it is None (the default),
    the environment variable ``RLSTUDIO_REWARD_SANDBOX_ALLOW_PARTIAL=1``; it is then
    logged as a warning naming what is missing.
    Thread-safe: concurrent `score_batch` calls are served one after the other.
    """

    def __init__(
        self,
        code: str,
        function_name: str = "compute_score",
        workers: int = 1,
        limits: SandboxLimits | None = None,
        *,
        require_full_isolation: bool | None = None,
        filename: str = "reward.py",
        kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        if require_full_isolation is None:
            require_full_isolation = not partial_isolation_allowed()
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.limits = limits or SandboxLimits()
        info = check_source(code, function_name, filename)
        reward_kwargs = dict(kwargs or {})
        problem = kwargs_problem(reward_kwargs)
        if problem:
            raise RewardCodeError(problem)
        self._scratch = tempfile.mkdtemp(prefix="rlstudio-reward-")
        os.chmod(self._scratch, 0o711)
        self._lock = threading.Lock()
        self._closed = False
        self._message_id = 0
        self.restarts = 0
        self.batch_fallbacks = 0  # batch calls that failed as a whole and were retried
        self._workers: list[Worker] = []
        self._finalizer = weakref.finalize(self, shutdown, self._workers, self._scratch)
        for i in range(workers):
            scratch = os.path.join(self._scratch, f"w{i}")
            os.mkdir(scratch, 0o711)
            init = {
                "code": code,
                "function_name": function_name,
                "kwargs": reward_kwargs,
                "imports": list(info.imports),
                "limits": self.limits.to_wire(),
                "scratch": scratch,
                "require_full_isolation": require_full_isolation,
            }
            self._workers.append(Worker(init, i))
        try:
            for worker in self._workers:  # start them all, then wait: they load in parallel
                worker.spawn()
            for worker in self._workers:
                worker.await_ready(self.limits.load_timeout_s + GRACE_S)
        except BaseException:
            self.close()
            raise
        self.isolation: dict[str, bool] = dict(self._workers[0].isolation)
        self.batch = self._workers[0].batch
        missing = [name for name, active in self.isolation.items() if not active]
        if missing:
            logger.warning(
                "reward sandbox running with partial isolation (allowed explicitly); missing: %s",
                ", ".join(missing),
            )

    @property
    def worker_pids(self) -> list[int | None]:
        return [w.pid for w in self._workers]

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """End every process the pool started and wait for them, whatever their calls
        were doing; a batch being scored in another thread ends with error results."""
        self._closed = True
        # First without the lock, so a batch in flight ends now instead of at its limits:
        # its thread sees each worker's pipe close and restarts none (the pool is closed).
        for worker in self._workers:
            worker.end_processes()
        with self._lock:  # that thread is done: end what it may have started meanwhile
            self._finalizer()

    def score_batch(self, requests: list[RewardRequest]) -> list[RewardResult]:
        if self._closed:
            raise RuntimeError("this SandboxPool is closed")
        with self._lock:
            return self._score(requests)

    def _score(self, requests: list[RewardRequest]) -> list[RewardResult]:
        results: list[RewardResult | None] = [None] * len(requests)
        rows: list[tuple[int, list[Any]]] = []
        for i, r in enumerate(requests):
            row = [r.data_source, r.solution_str, r.ground_truth, r.extra_info]
            try:
                wire.encode(row)
            except (TypeError, ValueError) as exc:
                results[i] = error_result(f"request cannot be sent to the sandbox: {exc}")
                continue
            rows.append((i, row))
        jobs = self._chunks(rows, whole=self.batch)
        self._dispatch(deque(jobs), results)
        if self.batch:
            self._score_failed_batches_row_by_row(jobs, results)
        return [r if r is not None else error_result("sandbox: no result") for r in results]

    def _chunks(self, rows: list[tuple[int, list[Any]]], whole: bool) -> list[_Job]:
        # Each chunk is one hardened template process (one load of the code); spread the
        # chunks over the workers, several per worker so a slow chunk does not idle the rest.
        size = max(1, min(self.limits.chunk_size, math.ceil(len(rows) / len(self._workers))))
        return [
            _Job([i for i, _ in rows[s : s + size]], [row for _, row in rows[s : s + size]], whole)
            for s in range(0, len(rows), size)
        ]

    def _score_failed_batches_row_by_row(
        self, jobs: list[_Job], results: list[RewardResult | None]
    ) -> None:
        """A batch call that failed as a whole (every row has the same error: a timeout,
        crash, exception or wrong length) is retried one row per call, so one hostile row
        fails alone and the others score. Each of those calls gets ``timeout_s``."""
        failed = [
            job
            for job in jobs
            if len(job.indices) > 1 and _failed_as_a_whole([results[i] for i in job.indices])
        ]
        if not failed:
            return
        self.batch_fallbacks += len(failed)
        for job in failed:
            first = results[job.indices[0]]
            logger.info(
                "reward sandbox: a batch call of %d rows failed (%s); scoring them one by one",
                len(job.indices),
                first.error if first else "",
            )
        rows = [(i, row) for job in failed for i, row in zip(job.indices, job.rows, strict=True)]
        size_of = {i: len(job.indices) for job in failed for i in job.indices}
        self._dispatch(deque(self._chunks(rows, whole=False)), results)
        for i, _ in rows:
            result = results[i]
            if result is not None and result.error:
                result.error = scored_alone(result.error, size_of[i])

    def _dispatch(self, jobs: deque[_Job], results: list[RewardResult | None]) -> None:
        in_flight: dict[int, tuple[Worker, list[int], float]] = {}
        idle = deque(self._workers)
        with selectors.DefaultSelector() as sel:
            while jobs or in_flight:
                while jobs and idle:
                    worker = idle.popleft()
                    job = jobs.popleft()
                    indices, rows = job.indices, job.rows
                    self._message_id += 1
                    try:
                        self._ensure_running(worker)
                        worker.send(
                            {
                                "op": "score",
                                "id": self._message_id,
                                "requests": rows,
                                "batch": self.batch,
                                "whole": job.whole,
                                "whole_timeout_s": self.limits.batch_timeout_s(len(rows)),
                            }
                        )
                    except (OSError, SandboxUnavailableError, RewardCodeError) as exc:
                        self._fail(indices, results, f"sandbox worker unavailable: {exc}")
                        self._restart(worker, start=False)
                        idle.append(worker)
                        continue
                    deadline = (
                        time.monotonic()
                        + self.limits.timeout_s * (len(rows) + 1)
                        + self.limits.load_timeout_s
                        + GRACE_S
                    )
                    assert worker.proc is not None and worker.proc.stdout is not None
                    fd = worker.proc.stdout.fileno()
                    sel.register(fd, selectors.EVENT_READ)
                    in_flight[fd] = (worker, indices, deadline)
                if not in_flight:
                    continue
                wait = max(0.0, min(d for _, _, d in in_flight.values()) - time.monotonic())
                for key, _ in sel.select(wait):
                    worker, indices, _ = in_flight.pop(int(key.fd))
                    sel.unregister(key.fd)
                    try:
                        reply = worker.receive()
                        for i, raw in zip(indices, reply["results"], strict=True):
                            results[i] = _result_from_zygote(raw)
                    except (
                        wire.WireClosed,
                        ValueError,
                        KeyError,
                        TypeError,
                        OSError,
                        OverflowError,
                        RecursionError,
                    ) as exc:
                        code = worker.proc.poll() if worker.proc else None
                        self._fail(
                            indices,
                            results,
                            f"sandbox worker died (status {code}): {type(exc).__name__}",
                        )
                        self._restart(worker, start=False)
                    idle.append(worker)
                now = time.monotonic()
                for fd, (worker, indices, deadline) in list(in_flight.items()):
                    if now >= deadline:
                        del in_flight[fd]
                        sel.unregister(fd)
                        self._fail(indices, results, "sandbox worker unresponsive (killed)")
                        self._restart(worker, start=False)
                        idle.append(worker)

    @staticmethod
    def _fail(indices: list[int], results: list[RewardResult | None], reason: str) -> None:
        logger.warning("reward sandbox: %s", reason)
        for i in indices:
            results[i] = error_result(reason)

    def _restart(self, worker: Worker, start: bool) -> None:
        worker.kill()
        worker.proc = None
        self.restarts += 1
        if start:
            self._ensure_running(worker)

    def _ensure_running(self, worker: Worker) -> None:
        if worker.proc is not None and worker.proc.poll() is None:
            return
        if self._closed:
            raise SandboxUnavailableError("the reward sandbox was closed")
        if worker.proc is not None:
            self._restart(worker, start=False)
        worker.spawn()
        worker.await_ready(self.limits.load_timeout_s + GRACE_S)


@dataclass(frozen=True)
class _Job:
    """Rows sent to one worker in one message: their positions in the request list, the
    rows, and whether the batch function is called once on all of them (``whole``)."""

    indices: list[int]
    rows: list[list[Any]]
    whole: bool


def _failed_as_a_whole(results: list[RewardResult | None]) -> bool:
    # A whole call's failure (timeout, crash, memory, exception, wrong length) gives every
    # row the same error; rows failing on their own (an invalid return) rarely agree, and
    # when they do the retry costs time, never a score.
    errors = {r.error if r is not None else "no result" for r in results}
    return len(errors) == 1 and "" not in errors


def _result_from_zygote(raw: dict[str, Any]) -> RewardResult:
    # The zygote already re-validated what the child sent; only types are checked here.
    return RewardResult(
        score=float(raw["score"]),
        components={str(k): float(v) for k, v in dict(raw["components"]).items()},
        extra=dict(raw["extra"]),
        error=str(raw["error"]),
        elapsed_ms=float(raw["elapsed_ms"]),
        output=str(raw["output"]),
    )


ALLOW_PARTIAL_ENV = "RLSTUDIO_REWARD_SANDBOX_ALLOW_PARTIAL"


def partial_isolation_allowed() -> bool:
    """Whether this host's operator allowed a sandbox lacking protections (never implied)."""
    return os.environ.get(ALLOW_PARTIAL_ENV, "") == "1"


_ISOLATION_CACHE: dict[str, bool] = {}


def isolation_report() -> dict[str, bool]:
    """Which sandbox protections work on this host, measured by starting a tiny pool once
    (each value True means the protection is active; see `child.PROTECTIONS`)."""
    if not _ISOLATION_CACHE:
        code = (
            "def compute_score(data_source, solution_str, ground_truth, extra_info):\n"
            "    return 0.0\n"
        )
        limits = SandboxLimits(load_timeout_s=10)
        with SandboxPool(code, limits=limits, require_full_isolation=False) as pool:
            _ISOLATION_CACHE.update(pool.isolation)
    return dict(_ISOLATION_CACHE)

"""The startup timeline: when each phase between Create and the first chart point happened.

One definition of the phases, shared by the trainer (which marks its own) and the studio
(which marks the rest, stores them on the run's attempt and shows them on the run page).
Every mark is a wall-clock time (unix seconds, `time.time()`): the studio's and the
trainer's clocks are compared, which is exact on one machine and as good as the nodes'
clock sync on a cluster.

In the trainer, `begin()` opens the process's timeline at its first line of Python
(`trainer/__main__.py`); `mark()` elsewhere records a phase the first time it is reached
and is a no-op afterwards, or in a process that never began a timeline (a test calling
the training loop directly). The CLI attaches the studio reporter once it exists: it is
sent the marks made so far in one record, then each later mark as it happens
(docs/telemetry.md, record kind `startup`). Stdlib only: the studio imports this module.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Literal, get_args

Phase = Literal[
    # The studio's, as a run goes through them.
    "created",  # the run (or its resume) entered the queue
    "dispatched",  # a queue pass decided to start it
    "claimed",  # QUEUED -> STARTING, the attempt row written
    "submitted",  # Ray accepted the job
    # The trainer's.
    "process_started",  # the trainer process's first line of Python
    "bootstrap_done",  # its config, token and reward code fetched from the studio
    "imports_done",  # the training stack (torch, transformers) imported
    "model_loaded",  # the models built and loaded (in this process or on Ray workers)
    "data_loaded",  # the prompts fetched and tokenized: the trainer is ready to train
    "first_validation",  # the validation before training (trainer.val_before_train) done
    "first_rollout",  # the first training batch generated and scored
    "first_step",  # the first optimizer step done
    # Read by the studio from the first metrics record it stores: its emit time (the
    # trainer's clock), then the moment the studio stored it.
    "first_metric_reported",
    "first_metric_stored",
]
# Their usual order. A run reaches them in this order but for the first metric, which
# with `trainer.val_before_train` comes from that validation, before the first rollout:
# durations are taken between phases in the order they happened (studio.runs.startup).
PHASES: tuple[Phase, ...] = get_args(Phase)
TRAINER_PHASES: tuple[Phase, ...] = (
    "process_started",
    "bootstrap_done",
    "imports_done",
    "model_loaded",
    "data_loaded",
    "first_validation",
    "first_rollout",
    "first_step",
)
STUDIO_PHASES: tuple[Phase, ...] = tuple(p for p in PHASES if p not in TRAINER_PHASES)

Sink = Callable[[dict[str, float]], None]


class Timeline:
    """One process's marks: the first time of each phase, sent on to a sink once one is
    attached. Thread-safe (the uploader and training threads may both reach it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._marks: dict[str, float] = {}
        self._sink: Sink | None = None

    def mark(self, phase: Phase, at: float | None = None) -> None:
        with self._lock:
            if phase in self._marks:
                return  # the first time counts (a later step reaches it again)
            self._marks[phase] = time.time() if at is None else at
            sink, new = self._sink, {str(phase): self._marks[phase]}
        if sink is not None:
            sink(new)

    def attach(self, sink: Sink) -> None:
        """Send `sink` every mark so far (one call), then each later one."""
        with self._lock:
            self._sink = sink
            made = dict(self._marks)
        if made:
            sink(made)

    @property
    def marks(self) -> Mapping[str, float]:
        with self._lock:
            return dict(self._marks)


_current: Timeline | None = None


def begin(at: float) -> Timeline:
    """Open this process's timeline, its `process_started` at `at` (the caller took it at
    its first line, before any heavy import)."""
    global _current
    _current = Timeline()
    _current.mark("process_started", at)
    return _current


def current() -> Timeline | None:
    return _current


def mark(phase: Phase) -> None:
    """Record `phase` now, the first time it is reached in a process that began a
    timeline; otherwise nothing."""
    if _current is not None:
        _current.mark(phase)


def attach(sink: Sink) -> None:
    """Send the process's marks to `sink` (no timeline began: nothing is ever sent)."""
    if _current is not None:
        _current.attach(sink)

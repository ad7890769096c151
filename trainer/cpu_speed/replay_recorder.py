"""The replay seam: what connects the HF engine's decoding to the update's log-prob pass.

`ReplayRecorder` watches the engine's forwards (`trainer.rollout.hf.DecodeWatcher`)
while a step's rollout is collected (a `trainer.training.step_hooks.StepHook`), has every
linear layer write its decoding output into one `LinearOutputs`, and learns which
recording row each row of the step's batch is. Installed on the model as its
`trainer.rollout.forward_reuse.ForwardReuse`, it wraps the update's shared-prefix forwards
and replays the recorded outputs while the weights are still those of the rollout
(trainer.cpu_speed.linear_replay).

The trainer's core only sees those protocols; `replay_recorder` decides, once, whether a
run replays at all, and installs the recorder where it does (the replay converter,
trainer.models.converters, calls it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext

import torch
from torch import Tensor, nn

from trainer.config.schema import RunConfig
from trainer.cpu_speed.linear_replay import LinearOutputs, replayable_linears
from trainer.rollout.engine import Completion
from trainer.rollout.forward_reuse import install_forward_reuse
from trainer.rollout.hf import HFEngine

# Ceiling of one rollout's recording: every linear output of every response token (the
# long128 bench, 64 x 127 tokens of a 25M model, takes 1.4 GB; a 0.5B model would take
# ~1.2 MB a token). Past it the rollout records nothing and the update multiplies.
MAX_RECORDING_BYTES = 8 * 2**30


def recording_budget() -> int:
    """Bytes a rollout may record: a quarter of the machine's memory, at most the ceiling."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return min(MAX_RECORDING_BYTES, memory // 4)


def replay_recorder(
    cfg: RunConfig, engine: HFEngine, device: torch.device
) -> ReplayRecorder | None:
    """The run's recorder, watching `engine` and installed on its model, or None when its
    update cannot replay.
    `speed.replay_rollout_outputs=on` refuses a run it cannot apply to (the config's own
    reasons are refused when the config is read: RunConfig.replay_blockers)."""
    setting = cfg.speed.replay_rollout_outputs
    if setting == "off" or cfg.replay_blockers:
        return None
    # On a GPU the recording would hold accelerator memory; it was never measured there.
    blocker = (
        f"the model trains on {device.type}, and replay is for CPU training"
        if device.type != "cpu"
        else "the model drops out, or a linear layer is not a plain one"
        if replayable_linears(engine.model) is None
        else None
    )
    if blocker is not None:
        if setting == "on":
            raise ValueError(
                f"speed.replay_rollout_outputs=on cannot apply to this run: {blocker}. "
                "Set it to auto (replay where it applies) or off."
            )
        return None
    recorder = ReplayRecorder(engine.model, max(1, cfg.rollout.max_new_tokens - 1))
    engine.watcher = recorder
    install_forward_reuse(engine.model, recorder)
    return recorder


class ReplayRecorder:
    """Records a step's rollout for its update to replay (module docstring). Records only
    inside `collecting`, so validation and evaluation generation pass untouched."""

    def __init__(self, model: nn.Module, columns: int) -> None:
        self.outputs = LinearOutputs(model, columns, recording_budget())
        self._collecting = False
        self._recording = False  # this generate() call records
        self._part: tuple[int, int] | None = None  # the chunk being decoded: part, first row
        self._call_rows: list[int | None] = []  # this call's rows' recording rows
        # id(completion) -> (completion, its recording row); the completion is kept so
        # that its id stays its own until the step ends.
        self._rows: dict[int, tuple[Completion, int]] = {}
        # The step's batch row (sample id) -> its recording row; None when a row was not
        # recorded (the recording ran out of room) or no batch is waiting for its update.
        self._batch_rows: Tensor | None = None

    # -- the step (trainer.training.step_hooks.StepHook) -----------------------------------

    @contextmanager
    def rollout(self) -> Iterator[None]:
        """Around a step's rollout: record into a fresh recording (the memory of the last
        one is reused)."""
        self.outputs.restart(recording_budget())
        self._rows = {}
        self._batch_rows = None
        self._collecting = True
        try:
            yield
        finally:
            self._collecting = False

    def batch_built(self, completions: list[Completion]) -> None:
        """The step's batch holds these completions in this order; replay serves it only
        when every one was recorded."""
        rows: list[int] = []
        for completion in completions:
            found = self._rows.get(id(completion))
            if found is None or found[0] is not completion:
                self._batch_rows = None
                return
            rows.append(found[1])
        self._batch_rows = torch.tensor(rows) if rows else None

    @property
    def batch_rows(self) -> Tensor | None:
        """The recording row of each row of the step's batch, or None (`batch_built`)."""
        return self._batch_rows

    def update_done(self) -> None:
        self._batch_rows = None
        self.outputs.release()

    # -- the update's forwards (trainer.rollout.forward_reuse.ForwardReuse) -----------------

    def reusing(
        self, model: nn.Module, sample_ids: Tensor, width: int
    ) -> AbstractContextManager[None]:
        rows = self._batch_rows
        if rows is None or width > self.outputs.columns or not self.outputs.fresh_for(model):
            return nullcontext()
        return self.outputs.replaying(model, rows[sample_ids.cpu()], width)

    # -- the engine (trainer.rollout.hf.DecodeWatcher) ------------------------------------

    @contextmanager
    def generation(self, max_new_tokens: int) -> Iterator[None]:
        # A call longer than the recording was sized for is not recorded.
        self._recording = self._collecting and max_new_tokens - 1 <= self.outputs.columns
        self._call_rows = []
        try:
            with self.outputs.recording() if self._recording else nullcontext():
                yield
        finally:
            self._recording = False
            self._part = None

    def prefill(self, rows: int) -> None:
        self.outputs.stop()  # the prefill is not recorded (the update runs its own)
        self._part = self.outputs.add_rows(rows) if self._recording else None
        first = self._part[1] if self._part is not None else None
        self._call_rows += [None if first is None else first + i for i in range(rows)]

    def decode(self, active: Tensor, step: int) -> None:
        if self._part is not None:
            self.outputs.target(self._part[0], active, column=step)
        else:
            self.outputs.stop()

    def generated(self, completions: list[Completion]) -> None:
        for completion, row in zip(completions, self._call_rows, strict=True):
            if row is not None:
                self._rows[id(completion)] = (completion, row)

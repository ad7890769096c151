"""The replay seam: what connects the HF engine's decoding to the update's log-prob pass.

`ReplayRecorder` watches the engine's forwards (`trainer.rollout.hf.DecodeWatcher`)
while a step's rollout is collected, has every linear layer write its decoding output
into one `LinearOutputs`, and hands the step a `ReplayHint` for the batch
(`trainer.training.batch.RolloutHint`): the recording and each batch row's row there. The update's
shared-prefix pass wraps its forward in the hint, which replays the recorded outputs
while the weights are still those of the rollout (trainer.cpu_speed.linear_replay).

The trainer's core only sees the two protocols; `replay_recorder` decides, once, whether
a run replays at all.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from trainer.config.schema import RunConfig
from trainer.cpu_speed.linear_replay import LinearOutputs, replayable_linears
from trainer.rollout.engine import Completion
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
    """The run's recorder, watching `engine`, or None when its update cannot replay.
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
    return recorder


@dataclass(frozen=True)
class ReplayHint:
    """A batch's recorded linear outputs: the recording, and each batch row's row there."""

    outputs: LinearOutputs
    rows: Tensor  # (B,) long: batch row -> recording row

    def select(self, rows: Tensor | slice) -> ReplayHint:
        return ReplayHint(self.outputs, self.rows[rows.cpu() if isinstance(rows, Tensor) else rows])

    def reusing(self, model: nn.Module, rows: Tensor, width: int) -> AbstractContextManager[None]:
        if width > self.outputs.columns or not self.outputs.fresh_for(model):
            return nullcontext()
        return self.outputs.replaying(model, self.rows[rows.cpu()], width)

    def release(self) -> None:
        self.outputs.release()


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

    # -- the step (trainer.training.state.RolloutHints) ------------------------------------------

    @contextmanager
    def collecting(self) -> Iterator[None]:
        """Around a step's rollout: record into a fresh recording (the memory of the last
        one is reused)."""
        self.outputs.restart(recording_budget())
        self._rows = {}
        self._collecting = True
        try:
            yield
        finally:
            self._collecting = False

    def for_batch(self, completions: list[Completion]) -> ReplayHint | None:
        """The hint of a batch of these completions (in batch order), or None when one of
        them was not recorded (the recording ran out of room)."""
        rows: list[int] = []
        for completion in completions:
            found = self._rows.get(id(completion))
            if found is None or found[0] is not completion:
                return None
            rows.append(found[1])
        return ReplayHint(self.outputs, torch.tensor(rows)) if rows else None

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

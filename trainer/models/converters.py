"""Model converters: how a built model computes, chosen by the run's `speed` section.

As torchtitan's model converters plug in, each converter here is applied once where the
trainer builds a model (`ModelConverters.apply`, right after the weights load and before
adapters or sharding), so neither model loading nor the training core carries a speed
argument. A converter changes how the model computes, never what: a run's checkpoints
are those of the same run without it, to float rounding.

The catalogue is closed (`build_converters`): the CPU speed package's oneDNN linear
layers and glibc memory reuse. A GPU path (graph capture, an attention choice) is one
more converter here and one more field of `speed`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, TypeVar

import torch
from torch import nn

from trainer.config.schema import RunConfig
from trainer.config.speed_section import CpuLinearKernel, SpeedConfig
from trainer.cpu_speed.memory import keep_freed_memory
from trainer.cpu_speed.onednn_linear import use_cpu_linear_kernel
from trainer.cpu_speed.replay_recorder import ReplayRecorder, replay_recorder
from trainer.rollout.hf import HFEngine

M = TypeVar("M", bound=nn.Module)


class ModelConverter(Protocol):
    def prepare(self, device: torch.device) -> None:
        """Once per process, before its first model is built on `device`."""
        ...

    def convert(self, model: nn.Module, device: torch.device) -> None:
        """`model`, just loaded, that will compute on `device`: change how it computes."""
        ...


@dataclass(frozen=True)
class CpuLinearKernelConverter:
    """`speed.cpu_linear_kernel`: float32 linear layers through oneDNN on the CPU
    (trainer.cpu_speed.onednn_linear). A model headed for a GPU keeps plain `nn.Linear`
    layers even while it is staged on the CPU; asking for oneDNN there is refused rather
    than ignored."""

    kernel: CpuLinearKernel

    def prepare(self, device: torch.device) -> None:
        if device.type != "cpu" and self.kernel == "onednn":
            raise ValueError(
                f"speed.cpu_linear_kernel=onednn is for CPU training; this model computes on "
                f"{device.type}. Set speed.cpu_linear_kernel to auto or torch."
            )

    def convert(self, model: nn.Module, device: torch.device) -> None:
        self.prepare(device)
        if device.type == "cpu":
            use_cpu_linear_kernel(model, self.kernel)


@dataclass(frozen=True)
class FreedMemoryReuse:
    """A CPU trainer process keeps the memory a step frees for the next step, so steps
    reuse it without page faults (trainer.cpu_speed.memory). Always on: it changes no
    value, and the measured speed-up has no case against it."""

    def prepare(self, device: torch.device) -> None:
        if device.type == "cpu":
            keep_freed_memory()

    def convert(self, model: nn.Module, device: torch.device) -> None:
        pass


@dataclass(frozen=True)
class ModelConverters:
    """The run's converters, in the order they apply."""

    converters: tuple[ModelConverter, ...]
    cfg: RunConfig

    def watch_steps(self, engine: HFEngine, device: torch.device) -> tuple[ReplayRecorder, ...]:
        """The step hooks (trainer.training.step_hooks) that see each training step, installed
        on `engine` and its model: `speed.replay_rollout_outputs`'s recorder, which hands
        each step's update the linear outputs the rollout computed
        (trainer.cpu_speed.replay_recorder), where the update can replay."""
        recorder = replay_recorder(self.cfg, engine, device)
        return () if recorder is None else (recorder,)

    def prepare(self, device: torch.device) -> None:
        for converter in self.converters:
            converter.prepare(device)

    def apply(self, model: M, device: torch.device | str) -> M:
        """`model` converted in place, returned for chaining at the place it is built."""
        for converter in self.converters:
            converter.convert(model, torch.device(device))
        return model


def build_converters(cfg: RunConfig) -> ModelConverters:
    """The converters the run's `speed` section asks for."""
    speed: SpeedConfig = cfg.speed
    return ModelConverters(
        (FreedMemoryReuse(), CpuLinearKernelConverter(speed.cpu_linear_kernel)), cfg
    )

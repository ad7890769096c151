"""`speed`: how the run computes, never what it computes.

Each field picks a model converter (trainer.models.converters) applied once where the
trainer builds its models; none changes a run's results beyond float rounding. The keys
lived under `model` and `actor` before this section existed: `RENAMED_KEYS` maps them
here, and the config loader reads them with a note (trainer.config.renamed_keys).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from trainer.config.section import OnOffAuto, Section

CpuLinearKernel = Literal["auto", "onednn", "torch"]

# Old dotted key -> its key in this section. Stored runs are migrated by the studio
# (studio/runs/migrations, "speed_section_keys"); YAML files and command lines that still
# spell the old keys are read with a note.
RENAMED_KEYS: dict[str, str] = {
    "model.cpu_linear_kernel": "speed.cpu_linear_kernel",
    "actor.replay_rollout_outputs": "speed.replay_rollout_outputs",
}


class SpeedConfig(Section):
    cpu_linear_kernel: CpuLinearKernel = Field(
        "auto",
        description="On CPU, what multiplies float32 linear layers (forward and backward): "
        "`onednn` calls oneDNN directly (1.3-2.6x PyTorch's default MKL path on an AMD Zen 5 "
        "CPU, where MKL skips AVX-512, but 0.6-1.4x, mostly slower, on an AVX2-only Zen 3); "
        "`torch` keeps PyTorch's default; `auto` picks oneDNN on AMD CPUs with AVX-512 and "
        "PyTorch's elsewhere. GPUs and other dtypes always use PyTorch's "
        "(trainer/cpu_speed/onednn_linear.py).",
    )
    replay_rollout_outputs: OnOffAuto = Field(
        "auto",
        description="CPU training with one optimizer step per batch (`actor.ppo_epochs` 1, "
        "one mini-batch) in a single process: the update takes every linear layer's output "
        "at the response tokens from the rollout, which computed them with the same weights, "
        "instead of multiplying again (trainer/cpu_speed/linear_replay.py; same values to "
        "float rounding). Costs memory: every linear output of every response token, held "
        "from the rollout to the update, up to a quarter of the machine's memory (8 GiB at "
        "most); past that the update multiplies. `auto` replays where it applies; `on` "
        "refuses a run where it cannot (a GPU, several workers or optimizer steps, "
        "multi-turn, a model that drops out); `off` never replays.",
    )

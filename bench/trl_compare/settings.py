"""The matched settings, models and workloads both trainers run, and where their files live.

`Matched` is what both trainers get (each translates it into its own config), `MODELS` the
model folders the demo builder makes, `WORKLOADS` the benchmark's workloads; `paths` gives a
workload's model and data files, `PHASES` the per-phase seconds every run reports.
"""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1]
ROOT = BENCH.parent
SCRIPT = BENCH / "trainer_vs_trl.py"  # the command; its workers run it with `--worker`
WORK = ROOT / "var" / "bench" / "trainer_vs_trl"


@dataclasses.dataclass(frozen=True)
class Matched:
    """The settings both trainers get (each translated into its own config)."""

    prompts_per_step: int = 16
    generations: int = 8  # GRPO group size; 16 x 8 = 128 completions per optimizer step
    micro_batch: int = 64  # sequences per forward/backward; 2 micro-batches accumulate
    generation_batch: int = 128  # completions generated in one engine call
    max_prompt_length: int = 128
    max_new_tokens: int = 16  # as the grpo-tiny-arith preset
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    lr: float = 5e-5  # as the grpo-tiny-arith preset
    betas: tuple[float, float] = (0.9, 0.999)
    adam_eps: float = 1e-8
    weight_decay: float = 0.0
    grad_clip: float = 1.0
    clip_low: float = 0.2
    clip_high: float = 0.2
    seed: int = 0  # pair i (ours and TRL run i) both use seed + i - 1; the models use seed
    # Parameter dtype of both trainers, end to end (weights, activations, optimizer state):
    # "bfloat16" is pure bf16 in both, no autocast and no fp32 master weights.
    dtype: str = "float32"

    @property
    def completions_per_step(self) -> int:
        return self.prompts_per_step * self.generations


MATCHED = Matched()


@dataclasses.dataclass(frozen=True)
class BenchModel:
    """A model folder built once by the demo builder (trainer.demo.model)."""

    demo_size: str  # trainer.demo.model.DEMO_SIZES
    warm_start: bool  # the arith warm start: short answers ending in EOS


# The long model has the large one's shape but random weights: it almost never samples
# EOS (1 token of ~500), so its completions run to the token limit, as long RL completions do.
MODELS = {
    "demo": BenchModel("tiny", warm_start=True),
    "large": BenchModel("bench", warm_start=True),
    "long": BenchModel("bench", warm_start=False),
}


@dataclasses.dataclass(frozen=True)
class Workload:
    model: str  # key of MODELS
    matched: Matched
    reward: str  # "arith" (our built-in) or "digit_share" (bench/digit_share_reward.py)
    evaluate: bool  # greedy arith accuracy after training (meaningless without warm start)
    note: str
    # Ours only: what multiplies float32 linear layers on CPU (trainer.cpu_speed.onednn_linear). TRL
    # runs PyTorch's own kernels; "torch" gives ours the same ones.
    our_cpu_linear_kernel: str = "auto"


# Long completions: 8 prompts x 8 samples, one optimizer step per batch, completions at the
# token limit. Micro-batches keep about 5k token positions per forward in both trainers.
LONG = Matched(prompts_per_step=8, generation_batch=64, micro_batch=32, max_new_tokens=128)
WORKLOADS = {
    "demo": Workload("demo", MATCHED, "arith", True, "short: warm start, ~6-token answers"),
    "large": Workload("large", MATCHED, "arith", True, "short: warm start, ~6-token answers"),
    "long128": Workload("long", LONG, "digit_share", False, "long: 128 new tokens, no EOS"),
    # Both trainers in pure bf16: on a CPU with AMX (this one has it) a bf16 matmul is 3.5x
    # (64 rows) to 8x (3,500 rows) an fp32 one, so the rest of the step weighs more; GPU
    # runs train in bf16 too.
    "long128-bf16": Workload(
        "long",
        dataclasses.replace(LONG, dtype="bfloat16"),
        "digit_share",
        False,
        "long: 128 new tokens, no EOS, pure bf16",
    ),
    # long128 with our linear layers on PyTorch's kernels (MKL), as TRL's: what is left of
    # the ratio without the oneDNN kernels (on an AMD CPU MKL skips AVX-512).
    "long128-torch-kernels": Workload(
        "long",
        LONG,
        "digit_share",
        False,
        "long: 128 new tokens, no EOS, ours on PyTorch's linear kernels",
        our_cpu_linear_kernel="torch",
    ),
    "long512": Workload(
        "long",
        dataclasses.replace(LONG, micro_batch=8, max_new_tokens=512),
        "digit_share",
        False,
        "long: 512 new tokens, no EOS",
    ),
}
DIGIT_SHARE_REWARD = BENCH / "digit_share_reward.py"

# Per-phase seconds, summed over a run's steps; "other" is the rest of the step's wall time.
PHASES = ("gen", "reward", "old_log_prob", "ref", "update", "sync", "other")


def paths(workload: str) -> dict[str, Path]:
    """A workload's model folder, data folder and arith train and test files."""
    return {
        "model": WORK / "models" / WORKLOADS[workload].model,
        "data": WORK / "data",
        "train": WORK / "data" / "arith" / "train.parquet",
        "test": WORK / "data" / "arith" / "test.parquet",
    }


def diffs(times: list[float]) -> list[float]:
    """The gaps between consecutive times (a run's seconds per step)."""
    return [b - a for a, b in itertools.pairwise(times)]

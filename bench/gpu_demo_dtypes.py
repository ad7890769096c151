"""The demo preset's step time per dtype on one device: fp32, bf16, then fp32 again.

12 steps each, no validation; prints the median of steps 3-12 of the step, generation and
update times, the mean response length and score. Written to find why the demo model's
bf16 steps were 4x slower than fp32's on an H100 (docs/benchmarks.md, "The trainer on a
GPU"); the models and data are `bench/gpu_check.py`'s.

    python bench/gpu_demo_dtypes.py cuda
    .venv/bin/python bench/gpu_demo_dtypes.py cpu
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gpu_check

from trainer.training.loop import Trainer

KEYS = (
    "timing_s/step",
    "timing_s/gen",
    "timing_s/update_actor",
    "timing_s/reward",
    "response_length/mean",
    "critic/score/mean",
)


def main() -> None:
    device = sys.argv[1] if len(sys.argv) > 1 else "cuda"
    work = Path("/tmp/gpuwork")
    root = gpu_check._demo_assets(work)
    for dtype in ("float32", "bfloat16", "float32"):
        cfg = gpu_check._demo_config(
            root,
            work / f"d-{dtype}-{time.time_ns()}",
            f"resources.device={device}",
            f"model.dtype={dtype}",
            "trainer.total_steps=12",
            "trainer.val_every=0",
            "trainer.val_before_train=false",
            "checkpoint.resume=never",
        )
        recorder = gpu_check.Recorder()
        Trainer(cfg, recorder).fit()
        steps = [recorder.steps[s] for s in sorted(recorder.steps)][2:]
        medians = {k: round(statistics.median(m.get(k, 0.0) for m in steps), 4) for k in KEYS}
        print(dtype, medians, flush=True)


if __name__ == "__main__":
    main()

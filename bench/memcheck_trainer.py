"""Train the raw demo model for a few steps under valgrind's memcheck, one process or two
FSDP2 workers, to find a write to memory the trainer does not own (issue #46).

glibc's own heap checks see a bad write only when it lands on a chunk header that malloc
reads later, and only in the run where it happens to; memcheck flags every write outside a
live block, at the write, with its stack. So one run under memcheck finds a bad write that
most runs survive unnoticed.

    python bench/memcheck_trainer.py prepare DIR      # natively: the raw demo model and data
    PYTHONMALLOC=malloc valgrind --tool=memcheck --undef-value-errors=no --error-limit=no \\
        --log-file=DIR/memcheck-one.log python bench/memcheck_trainer.py train DIR [overrides...]
    python bench/memcheck_trainer.py train-distributed DIR [overrides...]

`train-distributed` starts a private Ray head natively and its two workers under memcheck
(Ray's `py_executable`); their reports land in DIR/memcheck-<pid>.log. glibc's loader
always draws 4 reports (`strncmp` in `dl-load.c`, a known false one); anything else counts.

Under valgrind the CPU has no AVX-512 (valgrind does not emulate it), so `auto` would pick
PyTorch's linears; these runs ask for oneDNN by name, the path the trainer takes on the
Zen 5 CI machine. A run takes minutes per step: valgrind runs code 20-50x slower.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.distributed.conftest import DIGIT_REWARD, small_run_overrides


def prepare(root: Path) -> None:
    from trainer.demo.model import build_demo_assets

    build_demo_assets(root / "model", root / "data", seed=0, warmup_steps=0, evaluate=False)
    (root / "reward.py").write_text(DIGIT_REWARD)


def overrides(root: Path, run: str, extra: list[str]) -> list[str]:
    """The distributed tests' small GRPO run (their own definition), 3 steps with a
    checkpoint every 2, on oneDNN's linears."""
    return [
        *small_run_overrides(root, root / run),
        "checkpoint.save_every=2",
        "speed.cpu_linear_kernel=onednn",
        "trainer.total_steps=3",
        *extra,
    ]


def train(root: Path, extra: list[str]) -> None:
    from trainer.config import load_config
    from trainer.reporting.console import ConsoleReporter
    from trainer.training.loop import Trainer

    shutil.rmtree(root / "one", ignore_errors=True)
    cfg = load_config(overrides=overrides(root, "one", extra))
    Trainer(cfg, ConsoleReporter()).fit()
    print("memcheck_trainer: one process trained 3 steps", flush=True)


def train_distributed(root: Path, extra: list[str]) -> None:
    import ray

    from trainer.config import load_config
    from trainer.distributed.cluster import local_ray_head
    from trainer.distributed.runtime import distributed_runtime
    from trainer.reporting.console import ConsoleReporter
    from trainer.training.loop import Trainer

    shutil.rmtree(root / "two", ignore_errors=True)
    valgrind = " ".join(
        [
            "valgrind --tool=memcheck --undef-value-errors=no --error-limit=no",
            f"--log-file={root}/memcheck-%p.log {sys.executable}",
        ]
    )
    distributed = ["resources.num_workers=2", "resources.worker_timeout_s=3600"]
    cfg = load_config(overrides=overrides(root, "two", distributed + extra))
    # A worker under valgrind takes minutes to import torch; Ray gives up on one after 60 s.
    os.environ["RAY_worker_register_timeout_seconds"] = "3600"  # noqa: SIM112 (Ray's spelling)
    with local_ray_head() as head:
        # The workers' command line: valgrind in front of Python.
        head.connect({"py_executable": valgrind, "env_vars": {"PYTHONMALLOC": "malloc"}})
        try:
            with distributed_runtime(cfg, ConsoleReporter()) as runtime:
                Trainer(cfg, ConsoleReporter(), runtime).fit()
        finally:
            ray.shutdown()
    print("memcheck_trainer: two workers trained 3 steps", flush=True)


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[0] not in ("prepare", "train", "train-distributed"):
        sys.exit("usage: memcheck_trainer.py prepare|train|train-distributed DIR [overrides...]")
    command, root, extra = argv[0], Path(argv[1]), argv[2:]
    root.mkdir(parents=True, exist_ok=True)
    if command == "prepare":
        prepare(root)
    elif command == "train":
        train(root, extra)
    else:
        train_distributed(root, extra)


if __name__ == "__main__":
    main(sys.argv[1:])

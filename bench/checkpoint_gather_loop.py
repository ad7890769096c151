"""Gather two FSDP2 workers' full states again and again: the step where a worker's heap
was found corrupt (issue #46), run hundreds of times a minute instead of once a test.

Both heap aborts seen in CI (`malloc_consolidate(): unaligned fastbin chunk detected`)
killed a gloo worker in the group call `model_states` (phase "save_checkpoint"): the
collective gather of the actor's weights and optimizer state (torch's
`get_model_state_dict`/`get_optimizer_state_dict`, DTensor redistributes over gloo). A
test reaches that call once or twice; this loop trains one step (so the optimizer has
state) and then calls it N times, loading the states back every 10th call, as a resume
does. Run it under glibc's heap checks and a CPU stress, like bench/heap_checks.sh:

    python bench/memcheck_trainer.py prepare /tmp/mc
    stress-ng --cpu 2 --timeout 3600s --quiet &
    LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0 MALLOC_CHECK_=3 \\
        MALLOC_PERTURB_=165 python bench/checkpoint_gather_loop.py /tmp/mc 2000

`... /tmp/mc 300 --train` instead trains 300 steps with a checkpoint after each: the
whole path (generation, scoring, updates, weight syncs, gathers, the driver's writes) in
one run, without a test's start-up between steps.

The Ray head and its workers inherit this process's environment. A worker that dies ends
the loop with the group's error, which names the rank and the phase; the workers' own
output is in the head's temp dir (printed at the start).
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

from memcheck_trainer import overrides


def main(root: Path, calls: int, train_steps: bool) -> None:
    import ray

    from trainer.config import load_config
    from trainer.distributed.cluster import local_ray_head
    from trainer.distributed.runtime import distributed_runtime
    from trainer.reporting.console import ConsoleReporter
    from trainer.training.loop import Trainer

    shutil.rmtree(root / "loop", ignore_errors=True)
    steps = calls if train_steps else 1
    extra = ["resources.num_workers=2", f"trainer.total_steps={steps}"]
    if train_steps:
        extra.append("checkpoint.save_every=1")
    cfg = load_config(overrides=overrides(root, "loop", extra))
    with local_ray_head() as head:
        print(f"checkpoint_gather_loop: Ray temp dir {head.temp_dir}", flush=True)
        head.connect()
        try:
            with distributed_runtime(cfg, ConsoleReporter()) as runtime:
                Trainer(cfg, ConsoleReporter(), runtime).fit()
                if train_steps:
                    print(f"checkpoint_gather_loop: trained {steps} steps", flush=True)
                    return
                roles = runtime.roles
                started = time.monotonic()
                for call in range(1, calls + 1):
                    states = roles.model_states()  # type: ignore[attr-defined]
                    if call % 10 == 0:
                        roles.load_model_states(states)  # type: ignore[attr-defined]
                    if call % 100 == 0:
                        rate = call / (time.monotonic() - started)
                        print(f"checkpoint_gather_loop: {call} gathers, {rate:.1f}/s", flush=True)
        finally:
            ray.shutdown()
    print(f"checkpoint_gather_loop: {calls} gathers, no worker died", flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]), "--train" in sys.argv[3:])

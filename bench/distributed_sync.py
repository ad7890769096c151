"""Memory and time of the distributed trainer's weight sync (FSDP2 shards -> the rollout
engine's unsharded copy) on CPU workers (gloo).

Builds a random-init demo Llama of the given size (no warm start), starts a private Ray
head on free ports, a group of `--workers` CPU workers, and reports per rank: the bytes
of its actor shard, of the rollout copy, its RSS, and the median time of
`sync_rollout_weights` over `--repeats` syncs. Prints the load average too.

    .venv/bin/python bench/distributed_sync.py --hidden 512 --layers 8 --workers 2
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    import ray

    from trainer.config import load_config
    from trainer.demo.model import build_demo_assets
    from trainer.distributed.cluster import local_ray_head
    from trainer.distributed.group import WorkerGroup

    root = Path(tempfile.mkdtemp(prefix="sync-bench-"))
    build_demo_assets(
        root / "model",
        root / "data",
        warmup_steps=0,
        evaluate=False,
        hidden_size=args.hidden,
        num_layers=args.layers,
    )
    cfg = load_config(
        overrides=[
            f"model.path={root / 'model'}",
            f"resources.num_workers={args.workers}",
            "resources.memory_gb=1",
            "resources.device=cpu",
        ]
    )
    with local_ray_head() as head:
        head.connect()
        group = WorkerGroup(cfg)
        try:
            before = group.call("rollout_memory")
            seconds = []
            for _ in range(args.repeats):
                started = time.perf_counter()
                group.call("sync_rollout_weights")
                seconds.append(time.perf_counter() - started)
            after = group.call("rollout_memory")
        finally:
            group.close()
            ray.shutdown()
    mib = 2**20
    print(f"model hidden {args.hidden} x {args.layers} layers, {args.workers} CPU workers")
    print(f"load average before/after: {os.getloadavg()}")
    for rank, (b, a) in enumerate(zip(before, after, strict=True)):
        print(
            f"rank {rank}: actor shard {b['actor_shard_bytes'] / mib:.1f} MiB, rollout copy "
            f"{b['rollout_copy_bytes'] / mib:.1f} MiB, RSS {b['rss_bytes'] / mib:.0f} MiB -> "
            f"{a['rss_bytes'] / mib:.0f} MiB after {args.repeats} syncs"
        )
    print(f"sync_rollout_weights: median {statistics.median(seconds):.3f} s over {seconds}")


if __name__ == "__main__":
    main()

"""Time (or profile) our HF engine's generation alone on a trainer_vs_trl workload.

One step's rollout of the workload (its first `prompts_per_step` prompts x `generations`
samples, its `max_new_tokens`), generated once to warm up, then `--repeats` times:

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python bench/profile_generation.py --workload long128 --threads 2
    .venv/bin/python bench/profile_generation.py --workload long128 --threads 2 --profile

`--profile` prints the torch profiler's operators by self CPU time for one generation.
"""

from __future__ import annotations

import argparse
import time

import torch
from trl_compare.settings import WORKLOADS, paths
from trl_compare.trl import train_dataset
from trl_compare.workers import worker_build

from trainer.models.loading import load_policy, load_tokenizer
from trainer.rollout.engine import SamplingParams
from trainer.rollout.hf import HFEngine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="long128", choices=sorted(WORKLOADS))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    worker_build(args.workload)
    matched = WORKLOADS[args.workload].matched
    model_dir = paths(args.workload)["model"]
    model = load_policy(model_dir, matched.dtype)  # as our trainer loads it (SDPA attention)
    _, prompt_ids = train_dataset(args.workload)
    prompts = prompt_ids[: matched.prompts_per_step]
    engine = HFEngine(model, load_tokenizer(model_dir), max_batch_size=matched.generation_batch)
    sampling = SamplingParams(
        n=matched.generations,
        temperature=matched.temperature,
        top_p=matched.top_p,
        top_k=matched.top_k,
        max_new_tokens=matched.max_new_tokens,
        seed=matched.seed,
    )
    engine.generate(prompts, sampling)  # warm-up
    if args.profile:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU]) as prof:
            engine.generate(prompts, sampling)
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25))
        return
    for _ in range(args.repeats):
        started = time.perf_counter()
        completions = engine.generate(prompts, sampling)
        seconds = time.perf_counter() - started
        tokens = sum(len(c.token_ids) for c in completions)
        print(f"{seconds:.2f} s, {tokens} tokens, {tokens / seconds:.0f} tok/s")


if __name__ == "__main__":
    main()

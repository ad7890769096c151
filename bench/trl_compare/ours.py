"""Our trainer's side: its config at the matched settings and its training worker.

`ours_config` translates a workload into our `RunConfig`; `worker_ours` trains with it in
the current process and returns the run's timings, tokens and rewards, the per-phase
seconds read from our step metrics.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

from .settings import DIGIT_SHARE_REWARD, PHASES, WORKLOADS, Workload, diffs, paths


def ours_reward(workload: Workload) -> dict[str, Any]:
    if workload.reward == "arith":
        return {"function": "arith", "executor": "inprocess"}
    return {"function": "custom", "custom_path": str(DIGIT_SHARE_REWARD), "executor": "inprocess"}


def ours_config(
    workload: Workload, model_dir: Path, train_file: Path, run_dir: Path, steps: int, seed: int
) -> Any:
    from trainer.config.schema import RunConfig

    m = workload.matched
    return RunConfig.model_validate(
        {
            "model": {
                "path": str(model_dir),
                "dtype": m.dtype,
                "gradient_checkpointing": False,
            },
            "speed": {"cpu_linear_kernel": workload.our_cpu_linear_kernel},
            "data": {
                "train_files": [str(train_file)],
                "val_files": [],
                "format": "verl",
                "max_prompt_length": m.max_prompt_length,
                "train_batch_size": m.prompts_per_step,
                "shuffle": False,  # dataset order, as TRL's shuffle_dataset=False
                "apply_chat_template": True,
            },
            "rollout": {
                "engine": "hf",
                "n": m.generations,
                "temperature": m.temperature,
                "top_p": m.top_p,
                "top_k": m.top_k,
                "max_new_tokens": m.max_new_tokens,
                "stop": [],
                "micro_batch_size": m.generation_batch,
            },
            "algorithm": {
                "adv_estimator": "grpo",
                "norm_adv_by_std_in_grpo": True,
                "use_kl_in_reward": False,
                "dynamic_sampling": {"enabled": False},
                "overlong": {"enabled": False},
            },
            "actor": {
                "optim": {
                    "lr": m.lr,
                    "weight_decay": m.weight_decay,
                    "betas": m.betas,
                    "warmup_steps": 0,
                    "schedule": "constant",
                    "grad_clip": m.grad_clip,
                },
                "ppo_epochs": 1,
                "ppo_mini_batch_size": m.prompts_per_step,  # one optimizer step per batch
                "micro_batch_size": m.micro_batch,
                "policy_loss": "ppo",
                "clip_ratio_low": m.clip_low,
                "clip_ratio_high": m.clip_high,
                "loss_agg_mode": "token-mean",
                "entropy_coeff": 0.0,
                "use_kl_loss": False,
            },
            "reward": ours_reward(workload),
            "resources": {"num_workers": 1, "device": "cpu"},
            "checkpoint": {
                "dir": str(run_dir / "ckpt"),
                "save_every": 0,
                "keep_last": 1,
                "resume": "never",
                "save_hf": True,
            },
            "logging": {"console": False, "jsonl_path": None, "samples_per_step": 0},
            "trainer": {
                "total_steps": steps,
                "val_every": 0,
                "val_before_train": False,
                "seed": seed,
                "experiment_name": "bench-trainer-vs-trl",
            },
        }
    )


class BenchReporter:
    """Reporter protocol: keeps per-step metrics and the time each step ended; prints nothing."""

    def __init__(self) -> None:
        self.steps: list[dict[str, float]] = []
        self.progress_times: dict[int, float] = {}
        self.cpu_times: dict[int, float] = {}

    def metrics(self, step: int, values: dict[str, float]) -> None:
        self.steps.append(dict(values, step=float(step)))

    def samples(self, step: int, samples: list[Any]) -> None:
        pass

    def log(self, level: str, message: str) -> None:
        if level in ("warning", "error"):
            print(f"[ours {level}] {message}", file=sys.stderr)

    def checkpoint(self, step: int, path: str) -> None:
        pass

    def status(self, status: str, detail: str = "") -> None:
        pass

    def progress(self, step: int, total: int) -> None:
        self.progress_times[step] = time.perf_counter()
        self.cpu_times[step] = time.process_time()  # all threads of this process

    def close(self) -> None:
        pass


# our step's timing_s/* names -> the table's phases (adv and the rest count as "other")
OUR_PHASES = {
    "gen": "gen",
    "reward": "reward",
    "old_log_prob": "old_log_prob",
    "ref": "ref",
    "update_actor": "update",
    "update_weights": "sync",
}


def worker_ours(workload: str, run_dir: Path, steps: int, seed: int) -> dict[str, Any]:
    import torch

    from trainer.training.loop import Trainer

    p = paths(workload)
    cfg = ours_config(WORKLOADS[workload], p["model"], p["train"], run_dir, steps, seed)
    reporter = BenchReporter()
    trainer = Trainer(cfg, reporter)
    trainer.fit()
    t0, t_end = reporter.progress_times[0], reporter.progress_times[steps]
    step_ends = [reporter.progress_times[s] for s in range(1, steps + 1)]
    phases = dict.fromkeys(PHASES, 0.0)
    for s in reporter.steps:
        for name, phase in OUR_PHASES.items():
            phases[phase] += s.get(f"timing_s/{name}", 0.0)
    phases["other"] = (t_end - t0) - sum(phases.values())
    rows = cfg.data.train_batch_size * cfg.rollout.n
    # response_length/mean is over the step's completions (token ids incl. EOS)
    tokens = [round(s["response_length/mean"] * rows) for s in reporter.steps]
    return {
        "trainer": "ours",
        "wall_s": t_end - t0,
        "cpu_s": reporter.cpu_times[steps] - reporter.cpu_times[0],
        "step_s": diffs([t0, *step_ends]),
        "completion_tokens": sum(tokens),
        "step_tokens": tokens,
        "step_reward": [s["critic/score/mean"] for s in reporter.steps],
        "gen_s": sum(s.get("timing_s/gen", 0.0) for s in reporter.steps),
        "update_s": sum(s.get("timing_s/update_actor", 0.0) for s in reporter.steps),
        "phase_s": phases,
        "timing_s": {
            key.removeprefix("timing_s/"): sum(s.get(key, 0.0) for s in reporter.steps)
            for key in sorted({k for s in reporter.steps for k in s if k.startswith("timing_s/")})
        },
        # share of the update's (B, P+R) input that is padding: P and R are the step's
        # longest prompt and response; both trainers pad the same way
        "pad_fraction": statistics.fmean(
            1.0
            - s["perf/total_num_tokens"]
            / (rows * (s["prompt_length/max"] + s["response_length/max"]))
            for s in reporter.steps
        ),
        "final_dir": str(run_dir / "ckpt" / "hf"),
        "torch_threads": torch.get_num_threads(),
        "prompt_length_mean": statistics.fmean(s["prompt_length/mean"] for s in reporter.steps),
    }

"""Our GRPO trainer vs TRL's GRPOTrainer (CPU): completion tokens/s and reward at matched settings.

Workloads (`WORKLOADS`):
- short (`demo`, `large`): the warm-started demo models (3.3M, 25.5M) on the toy arith
  prompts, 16 prompts x 8, at most 16 new tokens; answers end after ~6 tokens.
- long (`long128`, `long512`): the 25.5M shape with random weights, which almost never
  samples EOS, so completions run to the limit (128 or 512 new tokens); 8 prompts x 8,
  reward `bench/digit_share_reward.py` (graded, so every group has a signal).
  `long128-bf16` is long128 with both trainers in pure bf16; the others run in fp32.
  Our trainer runs its default `model.cpu_linear_kernel=auto` (trainer/cpu_linear.py):
  float32 linear layers through oneDNN on an AMD CPU with AVX-512, PyTorch's own kernels
  (as TRL's) elsewhere; each run's config records which one ran.
  `long128-torch-kernels` is long128 with ours on PyTorch's kernels on any CPU.

Both trainers start from the same weights (each model built once by the demo builder),
train on the same prompts in the same order, with the same reward (wrapped as a TRL reward
function), batch shape, sampling, loss aggregation, optimizer, seed and torch threads (see
`Matched`, the two config builders and `--threads`). Runs alternate (ours, TRL, ours,
TRL, ...), each in a fresh subprocess of this script. Per run: completion tokens/s
(generated response tokens incl. EOS over the wall time of the training steps, model load
and setup excluded), per-phase seconds (generation, reward, old and reference log-probs,
update, weight sync, other), the mean training reward of the last 5 steps, and for the
short workloads the greedy accuracy on the arith test split afterwards, computed for every
run's final weights by one evaluator process (plain `transformers` generate, shared by both).

    .venv/bin/pip install -e '.[bench]'   # trl==1.16.0
    .venv/bin/python bench/trainer_vs_trl.py [--workloads demo,large,long128,long512]
        [--runs 3] [--threads 2]
        [--steps 20,long128=10,long128-bf16=10,long128-torch-kernels=10,long512=5]
    .venv/bin/python bench/trainer_vs_trl.py --quick   # 1 run x 2 steps per workload

Before a full run it waits (30 s polls, 25 min at most) for the 1-minute load average to
drop below 1.5, and before each run up to `--run-wait` seconds more; it records the load
around every run. Pair i (ours run i, TRL run i) uses seed i - 1 for both trainers.
Models and data are cached under `var/bench/trainer_vs_trl/` (building the large model's
warm start takes minutes, once).
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "var" / "bench" / "trainer_vs_trl"
LOAD_LIMIT = 1.5
LOAD_POLL_S = 30
LOAD_MAX_WAIT_S = 25 * 60
LAST_STEPS = 5  # training reward is averaged over this many final steps


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
    """A model folder built once by the demo builder (trainer.models.demo)."""

    demo_size: str  # trainer.models.demo.DEMO_SIZES
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
    # Ours only: what multiplies float32 linear layers on CPU (trainer.cpu_linear). TRL
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
DIGIT_SHARE_REWARD = Path(__file__).resolve().parent / "digit_share_reward.py"


# --------------------------------------------------------------------------------------
# Config builders (used by the workers and by `show-config`)
# --------------------------------------------------------------------------------------


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
                "cpu_linear_kernel": workload.our_cpu_linear_kernel,
            },
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


def trl_kwargs(m: Matched, run_dir: Path, steps: int, seed: int) -> dict[str, Any]:
    """Every GRPOConfig field that matters here, set explicitly (TRL 1.16 defaults differ
    from older releases: loss_type dapo, beta 0, scale_rewards group, bf16 and gradient
    checkpointing on)."""
    grad_accum = m.completions_per_step // m.micro_batch
    return {
        "output_dir": str(run_dir / "trl-out"),
        "seed": seed,
        "data_seed": seed,
        "use_cpu": True,
        "bf16": False,
        "fp16": False,
        "tf32": None,
        "torch_compile": False,
        "gradient_checkpointing": False,
        "use_liger_kernel": False,
        # batch shape: all completions generated at once, micro-batches accumulated into
        # one optimizer step (short: 128 = 2 x 64; long: 64 = 2 x 32 or 8 x 8)
        "num_generations": m.generations,
        "per_device_train_batch_size": m.micro_batch,
        "gradient_accumulation_steps": grad_accum,
        "steps_per_generation": grad_accum,  # => generation_batch_size = all (checked)
        "num_iterations": 1,
        "max_steps": steps,
        "num_train_epochs": 1,
        "shuffle_dataset": False,
        "pad_to_multiple_of": None,
        # sampling
        "max_completion_length": m.max_new_tokens,
        "temperature": m.temperature,
        "top_p": m.top_p,
        "top_k": m.top_k,
        "min_p": None,
        "repetition_penalty": 1.0,
        "generation_kwargs": None,
        "cache_implementation": None,
        "use_vllm": False,
        "use_transformers_continuous_batching": False,
        # objective
        "loss_type": "dapo",  # token sum / tokens of the whole 128-completion batch
        "beta": 0.0,
        "scale_rewards": "group",
        "multi_objective_aggregation": "sum_then_normalize",
        "reward_weights": None,
        "mask_truncated_completions": False,
        "epsilon": m.clip_low,
        "epsilon_high": m.clip_high,
        "delta": None,
        "importance_sampling_level": "token",
        "top_entropy_quantile": 1.0,
        "entropy_coef": 0.0,
        "off_policy_mask_threshold": None,
        "vllm_importance_sampling_correction": False,
        "sync_ref_model": False,
        "disable_dropout": False,
        "cast_lm_head_to_fp32": False,
        # optimizer
        "optim": "adamw_torch",
        "learning_rate": m.lr,
        "adam_beta1": m.betas[0],
        "adam_beta2": m.betas[1],
        "adam_epsilon": m.adam_eps,
        "weight_decay": m.weight_decay,
        "max_grad_norm": m.grad_clip,
        "lr_scheduler_type": "constant",
        "warmup_steps": 0,
        # data loading
        "dataloader_num_workers": 0,
        "dataloader_pin_memory": False,
        "dataloader_drop_last": False,
        "dataloader_persistent_workers": False,
        "remove_unused_columns": False,
        # no logging, saving or evaluation during training
        "report_to": "none",
        "logging_strategy": "no",
        "logging_steps": 1_000_000,
        "log_completions": False,
        "disable_tqdm": True,
        "save_strategy": "no",
        "eval_strategy": "no",
    }


def trl_config(m: Matched, run_dir: Path, steps: int, seed: int) -> Any:
    from trl import GRPOConfig

    cfg = GRPOConfig(**trl_kwargs(m, run_dir, steps, seed))
    assert cfg.generation_batch_size == m.completions_per_step, cfg.generation_batch_size
    assert cfg.generation_batch_size // cfg.num_generations == m.prompts_per_step
    return cfg


# --------------------------------------------------------------------------------------
# Workers (each runs in its own subprocess)
# --------------------------------------------------------------------------------------


def paths(workload: str) -> dict[str, Path]:
    return {
        "model": WORK / "models" / WORKLOADS[workload].model,
        "data": WORK / "data",
        "train": WORK / "data" / "arith" / "train.parquet",
        "test": WORK / "data" / "arith" / "test.parquet",
    }


def worker_build(workload: str) -> dict[str, Any]:
    """Build the workload's model with the demo builder (warm start if asked), once."""
    from trainer.models.demo import DEFAULT_WARM_START, build_demo_assets

    p = paths(workload)
    spec = MODELS[WORKLOADS[workload].model]
    marker = p["model"] / "bench_build.json"
    if marker.is_file() and p["train"].is_file():
        return dict(json.loads(marker.read_text()), cached=True)
    started = time.perf_counter()
    demo_size: Any = spec.demo_size
    assets = build_demo_assets(
        p["model"],
        p["data"],
        seed=MATCHED.seed,
        warmup_steps=DEFAULT_WARM_START.steps if spec.warm_start else 0,
        size=demo_size,
        evaluate=False,
    )
    info = {
        "model": WORKLOADS[workload].model,
        "demo_size": spec.demo_size,
        "warm_start": spec.warm_start,
        "build_seconds": time.perf_counter() - started,
        "warmup_seconds": assets.warmup_seconds,
        "num_params": _num_params(p["model"]),
    }
    marker.write_text(json.dumps(info))
    return dict(info, cached=False)


def _num_params(model_dir: Path) -> int:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(model_dir), local_files_only=True)
    return sum(p.numel() for p in model.parameters())


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


# Per-phase seconds, summed over a run's steps; "other" is the rest of the step's wall time.
PHASES = ("gen", "reward", "old_log_prob", "ref", "update", "sync", "other")
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

    from trainer.loop import Trainer

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
        "step_s": _diffs([t0, *step_ends]),
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


def _diffs(times: list[float]) -> list[float]:
    return [b - a for a, b in itertools.pairwise(times)]


def _train_dataset(workload: str) -> tuple[Any, list[list[int]]]:
    """TRL's dataset: the exact chat-templated prompt text our trainer renders, in the same
    order, with the ground truth; plus our prompt token ids to compare TRL's against."""
    from datasets import Dataset

    from trainer.config.schema import DataConfig
    from trainer.loop import load_prompt_items
    from trainer.models.loading import load_tokenizer

    p = paths(workload)
    tokenizer = load_tokenizer(p["model"])
    data_cfg = DataConfig(
        train_files=[str(p["train"])],
        val_files=[],
        format="verl",
        max_prompt_length=WORKLOADS[workload].matched.max_prompt_length,
    )
    items, filtered = load_prompt_items(data_cfg.train_files, tokenizer, data_cfg)
    assert filtered == 0, f"{filtered} prompts filtered as too long"
    dataset = Dataset.from_dict(
        {
            "prompt": [it.prompt_text for it in items],
            "ground_truth": [str(it.ground_truth) for it in items],
            "data_source": [it.data_source for it in items],
        }
    )
    return dataset, [it.prompt_ids for it in items]


def load_reward(workload: Workload) -> Any:
    """The workload's verl-signature reward function (the one our trainer is given)."""
    if workload.reward == "arith":
        from trainer.rewards.builtins import BUILTIN_REWARDS

        return BUILTIN_REWARDS["arith"]
    from trainer.rewards.loader import load_reward_file

    return load_reward_file(DIGIT_SHARE_REWARD, "compute_score").fn


class PhaseClock:
    """Adds wall seconds to named phases around wrapped calls (instrumentation only)."""

    def __init__(self) -> None:
        self.seconds = dict.fromkeys(PHASES, 0.0)
        self.inside: set[str] = set()

    def wrap(self, fn: Any, phase: Any, marks: str = "") -> Any:
        """`phase`: a name, or a function of the call's arguments giving one (or None)."""

        def timed(*args: Any, **kwargs: Any) -> Any:
            name = phase(*args, **kwargs) if callable(phase) else phase
            started = time.perf_counter()
            if marks:
                self.inside.add(marks)
            try:
                return fn(*args, **kwargs)
            finally:
                if marks:
                    self.inside.discard(marks)
                if name is not None:
                    self.seconds[name] += time.perf_counter() - started

        return timed


def worker_trl(workload: str, run_dir: Path, steps: int, seed: int) -> dict[str, Any]:
    import torch
    from transformers import AutoModelForCausalLM, TrainerCallback
    from trl import GRPOTrainer

    from trainer.models.loading import load_tokenizer, resolve_dtype

    spec = WORKLOADS[workload]
    p = paths(workload)
    cfg = trl_config(spec.matched, run_dir, steps, seed)
    dataset, our_prompt_ids = _train_dataset(workload)
    tokenizer = load_tokenizer(p["model"])
    model = AutoModelForCausalLM.from_pretrained(
        str(p["model"]), dtype=resolve_dtype(spec.matched.dtype), local_files_only=True
    )
    reward_fn = load_reward(spec)
    step_reward: list[float] = []
    step_tokens: list[int] = []

    def bench_reward(prompts, completions, completion_ids, ground_truth, data_source, **kwargs):
        scores = [
            float(reward_fn(ds, text, gt, None))
            for text, gt, ds in zip(completions, ground_truth, data_source, strict=True)
        ]
        step_reward.append(sum(scores) / len(scores))
        step_tokens.append(sum(len(ids) for ids in completion_ids))  # EOS included, as ours
        return scores

    times: dict[str, Any] = {"begin": None, "step_ends": [], "cpu": [], "optim_start": 0.0}
    clock = PhaseClock()

    class Clock(TrainerCallback):
        def on_train_begin(self, args, state, control, **kwargs):
            times["begin"] = time.perf_counter()
            times["cpu"].append(time.process_time())

        def on_pre_optimizer_step(self, args, state, control, **kwargs):
            times["optim_start"] = time.perf_counter()

        def on_optimizer_step(self, args, state, control, **kwargs):
            clock.seconds["update"] += time.perf_counter() - times["optim_start"]

        def on_step_end(self, args, state, control, **kwargs):
            times["step_ends"].append(time.perf_counter())
            times["cpu"].append(time.process_time())

    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[bench_reward],
        args=cfg,
        train_dataset=dataset,
        processing_class=tokenizer,
        callbacks=[Clock()],
    )
    # TRL's own prompt tokenisation must give exactly our prompt ids.
    trl_prompt_ids, _, _ = trainer._tokenize_prompts(list(dataset["prompt"]))
    mismatched = sum(
        list(a) != list(b) for a, b in zip(trl_prompt_ids, our_prompt_ids, strict=True)
    )
    if mismatched:
        raise RuntimeError(f"{mismatched} prompts tokenise differently in TRL and in ours")

    # Instrumentation only (timing): generation, reward, the no-grad log-prob passes made
    # while scoring (old policy if `model` is the policy, else the reference), and the
    # update = each training_step's forward/backward (minus its input preparation) plus
    # the optimizer step (callbacks above).
    prep = [0.0]

    def logprob_phase(model: Any, *args: Any, **kwargs: Any) -> str | None:
        if "scoring" not in clock.inside:
            return None  # the update's own forward: counted in training_step
        return "old_log_prob" if model is trainer.model else "ref"

    trainer._generate_single_turn = clock.wrap(trainer._generate_single_turn, "gen")
    trainer._calculate_rewards = clock.wrap(trainer._calculate_rewards, "reward")
    trainer._get_per_token_logps_and_entropies = clock.wrap(
        trainer._get_per_token_logps_and_entropies, logprob_phase
    )
    trainer._generate_and_score_completions = clock.wrap(
        trainer._generate_and_score_completions, None, marks="scoring"
    )
    prepare_inputs = trainer._prepare_inputs

    def timed_prepare(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return prepare_inputs(*args, **kwargs)
        finally:
            prep[0] += time.perf_counter() - started

    trainer._prepare_inputs = timed_prepare
    training_step = trainer.training_step

    def timed_training_step(*args: Any, **kwargs: Any) -> Any:
        started, prep_before = time.perf_counter(), prep[0]
        try:
            return training_step(*args, **kwargs)
        finally:
            elapsed = time.perf_counter() - started
            clock.seconds["update"] += elapsed - (prep[0] - prep_before)

    trainer.training_step = timed_training_step
    trainer.train()
    t0, ends = times["begin"], times["step_ends"]
    assert len(ends) == steps and len(step_reward) == steps, (len(ends), len(step_reward))
    phases = dict(clock.seconds)
    phases["other"] = (ends[-1] - t0) - sum(phases.values())
    final_dir = run_dir / "trl-final"
    trainer.save_model(str(final_dir))
    return {
        "trainer": "trl",
        "wall_s": ends[-1] - t0,
        "cpu_s": times["cpu"][-1] - times["cpu"][0],
        "step_s": _diffs([t0, *ends]),
        "completion_tokens": sum(step_tokens),
        "step_tokens": step_tokens,
        "step_reward": step_reward,
        "gen_s": phases["gen"],
        "update_s": phases["update"],
        "phase_s": phases,
        "final_dir": str(final_dir),
        "torch_threads": torch.get_num_threads(),
        "prompt_length_mean": statistics.fmean(len(x) for x in our_prompt_ids),
        "prompt_ids_match": True,  # checked above on every training prompt
    }


def worker_eval(workload: str, model_dirs: list[str]) -> dict[str, Any]:
    """Greedy accuracy (arith reward) on the arith test split for each folder's weights,
    with one evaluator: plain transformers generate, the same prompts and tokenizer."""
    import torch
    from transformers import AutoModelForCausalLM

    from trainer.config.schema import DataConfig
    from trainer.loop import load_prompt_items
    from trainer.models.loading import load_tokenizer
    from trainer.rewards.builtins import BUILTIN_REWARDS

    torch.manual_seed(0)
    p = paths(workload)
    tokenizer = load_tokenizer(p["model"])
    data_cfg = DataConfig(train_files=[], val_files=[str(p["test"])], format="verl")
    items, _ = load_prompt_items(data_cfg.val_files, tokenizer, data_cfg)
    batch = tokenizer.pad(
        {"input_ids": [it.prompt_ids for it in items]}, padding=True, return_tensors="pt"
    )
    arith = BUILTIN_REWARDS["arith"]
    out: dict[str, float] = {}
    checksums: dict[str, float] = {}
    for folder in model_dirs:
        model = AutoModelForCausalLM.from_pretrained(
            folder, dtype=torch.float32, local_files_only=True
        ).eval()
        checksums[folder] = float(sum(p.detach().double().abs().sum() for p in model.parameters()))
        with torch.inference_mode():
            generated = model.generate(
                **batch,
                do_sample=False,
                max_new_tokens=WORKLOADS[workload].matched.max_new_tokens,
                eos_token_id=tokenizer.eos_token_id,
                pad_token_id=tokenizer.pad_token_id,
            )
        texts = tokenizer.batch_decode(
            generated[:, batch["input_ids"].shape[1] :], skip_special_tokens=True
        )
        scores = [
            float(arith(it.data_source, t, it.ground_truth, None))
            for it, t in zip(items, texts, strict=True)
        ]
        out[folder] = sum(scores) / len(scores)
    return {"accuracy": out, "weights_abs_sum": checksums, "num_prompts": len(items)}


def worker_show_config(name: str, steps: int) -> dict[str, Any]:
    import torch
    import transformers
    import trl

    from trainer.cpu_linear import resolve_kernel

    workload = WORKLOADS[name]
    p = paths(name)
    scratch = WORK / "runs" / "show-config"
    seed = MATCHED.seed
    ours = ours_config(workload, p["model"], p["train"], scratch, steps, seed)
    theirs = trl_config(workload.matched, scratch, steps, seed)
    trl_effective = {
        k: getattr(theirs, k) for k in trl_kwargs(workload.matched, scratch, steps, seed)
    }
    trl_effective["generation_batch_size (derived)"] = theirs.generation_batch_size
    has_max_prompt_length = hasattr(theirs, "max_prompt_length")
    print(f"== {name}: ours: effective RunConfig ==")
    print(json.dumps(ours.model_dump(mode="json"), indent=1))
    print(f"== {name}: TRL: effective GRPOConfig (every field this bench sets, read back) ==")
    print(json.dumps(trl_effective, indent=1, default=str))
    print(f"TRL GRPOConfig has max_prompt_length: {has_max_prompt_length}")
    return {
        "versions": {
            "python": sys.version.split()[0],
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "trl": trl.__version__,
        },
        "torch_threads": torch.get_num_threads(),
        "trl_has_max_prompt_length": has_max_prompt_length,
        "our_cpu_linear_kernel": resolve_kernel(ours.model.cpu_linear_kernel),
    }


def worker_main(args: argparse.Namespace) -> None:
    if args.worker == "build":
        result = worker_build(args.workload)
    elif args.worker == "ours":
        result = worker_ours(args.workload, Path(args.run_dir), args.steps, args.seed)
    elif args.worker == "trl":
        result = worker_trl(args.workload, Path(args.run_dir), args.steps, args.seed)
    elif args.worker == "eval":
        result = worker_eval(args.workload, args.model_dirs)
    elif args.worker == "show-config":
        result = worker_show_config(args.workload, args.steps)
    else:
        raise SystemExit(f"unknown worker {args.worker!r}")
    Path(args.out).write_text(json.dumps(result, indent=1))


# --------------------------------------------------------------------------------------
# Orchestration (parent process: no torch imported here)
# --------------------------------------------------------------------------------------


def spawn(kind: str, out: Path, log: Path | None, *extra: str, echo: bool = False) -> Any:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", kind, "--out", str(out)]
    cmd += list(extra)
    # This checkout first; an inherited PYTHONPATH (e.g. where trl is installed) after it.
    python_path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, PYTHONPATH=python_path, TOKENIZERS_PARALLELISM="false")
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("HF_DATASETS_OFFLINE", "1")
    if echo:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, check=False)
    else:
        assert log is not None
        with log.open("w") as fh:
            proc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=fh, stderr=fh, check=False)
    if proc.returncode != 0:
        tail = log.read_text()[-4000:] if log is not None and log.is_file() else ""
        raise RuntimeError(f"worker {kind} failed (exit {proc.returncode}):\n{tail}")
    return json.loads(out.read_text())


def wait_for_quiet_machine(max_wait_s: float, poll_s: float, verbose: bool) -> dict[str, Any]:
    """Poll the 1-minute load average until it is below LOAD_LIMIT or `max_wait_s` passed."""
    started = time.monotonic()
    while True:
        load1 = os.getloadavg()[0]
        waited = time.monotonic() - started
        if load1 < LOAD_LIMIT:
            if verbose:
                print(f"load average {load1:.2f} < {LOAD_LIMIT}: starting", flush=True)
            return {"load1": load1, "waited_s": waited, "gave_up": False}
        if waited >= max_wait_s:
            print(
                f"load average still {load1:.2f} after {waited:.0f} s: running anyway", flush=True
            )
            return {"load1": load1, "waited_s": waited, "gave_up": True}
        if verbose:
            print(f"load average {load1:.2f} >= {LOAD_LIMIT}; waiting...", flush=True)
        time.sleep(poll_s)


def tok_per_s(run: dict[str, Any]) -> float:
    return float(run["completion_tokens"] / run["wall_s"])


def tok_per_cpu_s(run: dict[str, Any]) -> float:
    """Completion tokens per CPU-second of the worker (all its threads): less sensitive to
    other jobs on the machine than wall time, though contention still costs some CPU."""
    return float(run["completion_tokens"] / run["cpu_s"])


def median_step_tok_per_s(run: dict[str, Any]) -> float:
    """Median over the run's steps of (step's completion tokens / step's wall time): on a
    shared machine, other jobs that slow down a minority of the steps do not move it."""
    return statistics.median(
        tokens / seconds for tokens, seconds in zip(run["step_tokens"], run["step_s"], strict=True)
    )


def first_reward(run: dict[str, Any]) -> float:
    return statistics.fmean(run["step_reward"][:LAST_STEPS])


def last_reward(run: dict[str, Any]) -> float:
    return statistics.fmean(run["step_reward"][-LAST_STEPS:])


def ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def eval_accuracy(run: dict[str, Any]) -> float:
    value = run.get("eval_accuracy")
    return float("nan") if value is None else float(value)


METRICS = {  # key -> (label, per-run function, format)
    "tok_per_s": ("completion tok/s (wall)", tok_per_s, ".0f"),
    "step_tok_per_s": ("median per-step tok/s", median_step_tok_per_s, ".0f"),
    "tok_per_cpu_s": ("completion tok per CPU-s", tok_per_cpu_s, ".0f"),
    "last_reward": (f"train reward, last {LAST_STEPS} steps", last_reward, ".3f"),
    "eval_accuracy": ("eval greedy accuracy", eval_accuracy, ".3f"),
}
PHASE_LABELS = {
    "gen": "generation",
    "reward": "reward",
    "old_log_prob": "old log-probs",
    "ref": "ref log-probs",
    "update": "update (fwd/bwd + optimizer)",
    "sync": "weight sync",
    "other": "other",
}


def phase_per_step(run: dict[str, Any], phase: str) -> float:
    return float(run["phase_s"].get(phase, 0.0)) / len(run["step_s"])


def summarise(runs: list[dict[str, Any]], initial_accuracy: float | None) -> dict[str, Any]:
    ours = [r for r in runs if r["trainer"] == "ours"]
    trl = [r for r in runs if r["trainer"] == "trl"]
    pairs = list(zip(ours, trl, strict=True))
    median = {
        name: {key: statistics.median(fn(r) for r in group) for key, (_, fn, _) in METRICS.items()}
        for name, group in (("ours", ours), ("trl", trl))
    }
    phases = {
        name: {ph: statistics.median(phase_per_step(r, ph) for r in group) for ph in PHASES}
        for name, group in (("ours", ours), ("trl", trl))
    }
    return {
        "initial_accuracy": initial_accuracy,
        "median": median,
        "phase_s_per_step": phases,
        # pair i = ours run i and TRL run i (adjacent in time, same seed)
        "median_pair_ratio": {
            key: statistics.median(ratio(fn(a), fn(b)) for a, b in pairs)
            for key, (_, fn, _) in METRICS.items()
        },
        "ratio_of_medians": {
            key: ratio(median["ours"][key], median["trl"][key]) for key in METRICS
        },
    }


def print_table(name: str, info: dict[str, Any], runs: list[dict[str, Any]], s: dict[str, Any]):
    workload = WORKLOADS[name]
    m = workload.matched
    print(
        f"\n### {name}: {info['num_params'] / 1e6:.1f}M parameters ({workload.note}; "
        f"{m.prompts_per_step} prompts x {m.generations}, max {m.max_new_tokens} new tokens, "
        f"micro-batch {m.micro_batch}, reward {workload.reward})\n"
    )
    if s["initial_accuracy"] is not None:
        print(f"Greedy accuracy of the initial weights: {s['initial_accuracy']:.3f}\n")
    print(
        "| run | trainer | seed | completion tokens | wall s | median s/step | gen s "
        "| completion tok/s | median per-step tok/s | tok per CPU-s "
        "| train reward first/last 5 steps | eval greedy acc | load1 before/after |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        print(
            f"| {r['run']} | {r['trainer']} | {r['seed']} | {r['completion_tokens']} "
            f"| {r['wall_s']:.1f} | {statistics.median(r['step_s']):.2f} | {r['gen_s']:.1f} "
            f"| {tok_per_s(r):.0f} | {median_step_tok_per_s(r):.0f} | {tok_per_cpu_s(r):.0f} "
            f"| {first_reward(r):.3f} / {last_reward(r):.3f} | {eval_accuracy(r):.3f} "
            f"| {r['load_before']:.2f} / {r['load_after']:.2f} |"
        )
    ph = s["phase_s_per_step"]
    print("\n| phase, s per step (median of runs) | ours | TRL |")
    print("|---|---|---|")
    for phase, label in PHASE_LABELS.items():
        print(f"| {label} | {ph['ours'][phase]:.3f} | {ph['trl'][phase]:.3f} |")
    med, pr, rm = s["median"], s["median_pair_ratio"], s["ratio_of_medians"]
    print(
        "\n| | ours (median) | TRL (median) | median of per-pair ratios ours/TRL "
        "| ratio of medians |"
    )
    print("|---|---|---|---|---|")
    for key, (label, _, fmt) in METRICS.items():
        print(
            f"| {label} | {med['ours'][key]:{fmt}} | {med['trl'][key]:{fmt}} "
            f"| {pr[key]:.2f}x | {rm[key]:.2f}x |"
        )
    sys.stdout.flush()


def print_side_by_side(summaries: dict[str, dict[str, Any]]) -> None:
    """One line per workload: the figures the goals are stated in."""
    print(
        "\n## All workloads\n\n| workload | ours tok/s | TRL tok/s "
        "| median of per-pair ratios | train reward last 5 (ours / TRL) "
        "| s/step ours: gen + update + rest | s/step TRL: gen + update + rest |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, s in summaries.items():
        med, ph = s["median"], s["phase_s_per_step"]

        def split(who: str, ph: dict[str, Any] = ph) -> str:
            rest = sum(v for k, v in ph[who].items() if k not in ("gen", "update"))
            return f"{ph[who]['gen']:.2f} + {ph[who]['update']:.2f} + {rest:.2f}"

        print(
            f"| {name} | {med['ours']['tok_per_s']:.0f} | {med['trl']['tok_per_s']:.0f} "
            f"| **{s['median_pair_ratio']['tok_per_s']:.2f}x** "
            f"| {med['ours']['last_reward']:.3f} / {med['trl']['last_reward']:.3f} "
            f"| {split('ours')} | {split('trl')} |"
        )
    sys.stdout.flush()


def parse_workloads(text: str) -> list[str]:
    names = [w.strip() for w in text.split(",") if w.strip()]
    for name in names:
        if name not in WORKLOADS:
            raise SystemExit(f"unknown workload {name!r}; choose from {sorted(WORKLOADS)}")
    return names


def parse_steps(text: str, names: list[str]) -> dict[str, int]:
    """`20` for every workload, or per workload: `20,long512=10`."""
    steps: dict[str, int] = {}
    default = None
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, _, value = part.rpartition("=")
        if name:
            parse_workloads(name)
            steps[name] = int(value)
        else:
            default = int(value)
    return {n: steps.get(n, default if default is not None else 20) for n in names}


def run_workload(
    name: str, runs_per: int, steps: int, out_dir: Path, args: argparse.Namespace, wait: bool
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """Alternating runs (ours, TRL, ours, ...) and, where it means something, the eval."""
    runs: list[dict[str, Any]] = []
    for i in range(1, runs_per + 1):
        seed = MATCHED.seed + i - 1
        for kind in ("ours", "trl"):
            # Our own previous run keeps the load average up for a while; wait (briefly)
            # for other jobs to be quiet before each run too, and record what we saw.
            gate = (
                wait_for_quiet_machine(args.run_wait, 5, verbose=False)
                if wait
                else {"load1": os.getloadavg()[0], "waited_s": 0.0, "gave_up": False}
            )
            run_dir = out_dir / f"{name}-{kind}-{i}"
            run_dir.mkdir(parents=True, exist_ok=True)
            started = time.perf_counter()
            run = spawn(
                kind,
                run_dir / "result.json",
                run_dir / "worker.log",
                *("--workload", name, "--run-dir", str(run_dir)),
                *("--steps", str(steps), "--seed", str(seed), "--threads", str(args.threads)),
            )
            run.update(
                run=i,
                seed=seed,
                load_before=gate["load1"],
                load_wait_s=gate["waited_s"],
                load_after=os.getloadavg()[0],
                process_s=time.perf_counter() - started,
            )
            runs.append(run)
            print(
                f"  {name} {kind} #{i} (seed {seed}): {tok_per_s(run):.0f} completion tok/s, "
                f"median step {median_step_tok_per_s(run):.0f} tok/s, "
                f"{tok_per_cpu_s(run):.0f} per CPU-s, {run['wall_s']:.1f} s for {steps} "
                f"steps, last-{LAST_STEPS} reward {last_reward(run):.3f} "
                f"(process {run['process_s']:.0f} s, load {gate['load1']:.2f} -> "
                f"{run['load_after']:.2f})",
                flush=True,
            )
    if not WORKLOADS[name].evaluate:
        return runs, None
    initial = str(paths(name)["model"])
    folders = [initial] + [r["final_dir"] for r in runs]
    evaluated = spawn(
        "eval",
        out_dir / f"eval-{name}.json",
        out_dir / f"eval-{name}.log",
        *("--workload", name, "--model-dirs", *folders),
    )
    for r in runs:
        r["eval_accuracy"] = evaluated["accuracy"][r["final_dir"]]
        r["weights_abs_sum"] = evaluated["weights_abs_sum"][r["final_dir"]]
    return runs, evaluated


def run_benchmark(args: argparse.Namespace) -> None:
    names = parse_workloads(args.workloads)
    runs_per = 1 if args.quick else args.runs
    steps = {n: 2 for n in names} if args.quick else parse_steps(args.steps, names)
    if not args.quick and min(steps.values()) < LAST_STEPS:
        raise SystemExit(f"--steps must be >= {LAST_STEPS}")
    wait = not (args.quick or args.no_wait)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out_dir = WORK / "runs" / stamp
    out_dir.mkdir(parents=True, exist_ok=True)
    print(f"bench: workloads={names} runs={runs_per} steps={steps} -> {out_dir}", flush=True)

    builds = {}
    for name in names:
        print(f"building/reusing the model of {name} ...", flush=True)
        builds[name] = spawn(
            "build",
            out_dir / f"build-{name}.json",
            out_dir / f"build-{name}.log",
            *("--workload", name),
        )
        b = builds[name]
        cached = "cached" if b["cached"] else f"built in {b['build_seconds']:.0f} s"
        print(f"  {name}: {b['num_params'] / 1e6:.2f}M params ({cached})", flush=True)

    meta = {
        name: spawn(
            "show-config",
            out_dir / f"config-{name}.json",
            None if args.show_config else out_dir / f"config-{name}.log",
            *("--workload", name, "--steps", str(steps[name])),
            echo=args.show_config,
        )
        for name in names
    }
    for name in names:
        print(f"  {name}: ours multiplies linear layers with {meta[name]['our_cpu_linear_kernel']}")
    start_load = {"load1": os.getloadavg()[0], "waited_s": 0.0, "gave_up": False}
    if wait:
        start_load = wait_for_quiet_machine(LOAD_MAX_WAIT_S, LOAD_POLL_S, verbose=True)
    bench_started = time.monotonic()
    results: dict[str, Any] = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "meta": meta,
        "matched": {n: dataclasses.asdict(WORKLOADS[n].matched) for n in names},
        "steps": steps,
        "runs_per_trainer": runs_per,
        "start_load": start_load,
        "workloads": {},
    }
    summaries: dict[str, dict[str, Any]] = {}
    for name in names:
        runs, evaluated = run_workload(name, runs_per, steps[name], out_dir, args, wait)
        initial = evaluated["accuracy"][str(paths(name)["model"])] if evaluated else None
        summaries[name] = summarise(runs, initial)
        results["workloads"][name] = {
            "build": builds[name],
            "runs": runs,
            "eval": evaluated,
            "summary": summaries[name],
        }
        print_table(name, builds[name], runs, summaries[name])
        if not args.keep_weights:
            for r in runs:  # weights and checkpoints; result.json and worker.log stay
                for sub in ("ckpt", "trl-out", "trl-final"):
                    shutil.rmtree(out_dir / f"{name}-{r['trainer']}-{r['run']}" / sub, True)
    print_side_by_side(summaries)
    results["total_s"] = time.monotonic() - bench_started
    results["load1_at_end"] = os.getloadavg()[0]
    (out_dir / "results.json").write_text(json.dumps(results, indent=1))
    print(
        f"\ntotal {results['total_s'] / 60:.1f} min after the start gate; load average at start "
        f"{start_load['load1']:.2f}, at end {results['load1_at_end']:.2f}; "
        f"results: {out_dir / 'results.json'}"
    )


def report(path: Path) -> None:
    """Print the tables again from a results.json (e.g. after changing the summary)."""
    results = json.loads(path.read_text())
    runs = results["runs_per_trainer"]
    print(f"{results.get('command', '')}: steps {results['steps']}, {runs} runs per trainer")
    summaries = {}
    for name, data in results["workloads"].items():
        evaluated = data["eval"]
        initial = evaluated["accuracy"][str(paths(name)["model"])] if evaluated else None
        summaries[name] = summarise(data["runs"], initial)
        print_table(name, data["build"], data["runs"], summaries[name])
    print_side_by_side(summaries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--workloads",
        "--sizes",
        default="demo,large,long128,long512",
        help=f"comma list of: {', '.join(WORKLOADS)}",
    )
    parser.add_argument("--runs", type=int, default=3, help="runs per trainer and workload")
    parser.add_argument(
        "--steps",
        default="20,long128=10,long128-bf16=10,long128-torch-kernels=10,long512=5",
        help="optimizer steps per run: one number, and/or per workload (name=steps)",
    )
    parser.add_argument("--quick", action="store_true", help="1 run x 2 steps per workload")
    parser.add_argument("--no-wait", action="store_true", help="skip waiting for a quiet machine")
    parser.add_argument(
        "--run-wait",
        type=float,
        default=60.0,
        help="before each run, wait up to this many seconds for load average < 1.5",
    )
    parser.add_argument("--keep-weights", action="store_true", help="keep every run's weights")
    parser.add_argument(
        "--threads",
        type=int,
        default=2,
        help="torch threads of every worker, both trainers alike (0: torch's default); "
        "1 is steadier on a machine shared with other jobs",
    )
    parser.add_argument(
        "--show-config", action="store_true", help="print both trainers' effective configs"
    )
    parser.add_argument("--report", metavar="RESULTS_JSON", help="print the tables of a past run")
    # worker-only arguments
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--workload", help=argparse.SUPPRESS)
    parser.add_argument("--run-dir", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=MATCHED.seed, help=argparse.SUPPRESS)
    parser.add_argument("--model-dirs", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        if args.worker in ("ours", "trl", "show-config"):
            args.steps = int(args.steps)
        if args.threads > 0:  # the same for both trainers (and the evaluator)
            import torch

            torch.set_num_threads(args.threads)
        worker_main(args)
    elif args.report:
        report(Path(args.report))
    else:
        run_benchmark(args)


if __name__ == "__main__":
    main()

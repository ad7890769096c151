"""TRL's side: its GRPOConfig at the matched settings and its training worker.

`trl_kwargs` sets every GRPOConfig field that matters explicitly; `worker_trl` trains TRL's
GRPOTrainer on the exact prompts our trainer renders, with our reward wrapped as a TRL reward
function, and times its phases by wrapping the trainer's methods (`PhaseClock`).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from .settings import DIGIT_SHARE_REWARD, PHASES, WORKLOADS, Matched, Workload, diffs, paths


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


def train_dataset(workload: str) -> tuple[Any, list[list[int]]]:
    """TRL's dataset: the exact chat-templated prompt text our trainer renders, in the same
    order, with the ground truth; plus our prompt token ids to compare TRL's against."""
    from datasets import Dataset

    from trainer.config.schema import DataConfig
    from trainer.models.loading import load_tokenizer
    from trainer.training.loop import load_prompt_items

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
    dataset, our_prompt_ids = train_dataset(workload)
    tokenizer = load_tokenizer(p["model"])
    model = AutoModelForCausalLM.from_pretrained(
        str(p["model"]), dtype=resolve_dtype(spec.matched.dtype), local_files_only=True
    )
    reward_fn = load_reward(spec)
    step_reward: list[float] = []
    step_tokens: list[int] = []

    def bench_reward(
        prompts: list[Any],
        completions: list[str],
        completion_ids: list[list[int]],
        ground_truth: list[str],
        data_source: list[str],
        **kwargs: Any,
    ) -> list[float]:
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
        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            times["begin"] = time.perf_counter()
            times["cpu"].append(time.process_time())

        def on_pre_optimizer_step(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            times["optim_start"] = time.perf_counter()

        def on_optimizer_step(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            clock.seconds["update"] += time.perf_counter() - times["optim_start"]

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
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
        "step_s": diffs([t0, *ends]),
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

"""The parts verl's key rules are made of (trainer.config.verl_keys): the rule type, the
reasons many keys share, and the rules of the sections every role repeats (optimizer,
FSDP, profiler, model, actor-like settings) under a prefix."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

AR = "actor_rollout_ref"
MT = f"{AR}.rollout.multi_turn"


@dataclass(frozen=True)
class VerlRule:
    kind: Literal["ignored", "refused"]
    reason: str
    # refused: values that are what RL Studio does anyway (accepted, reported as ignored).
    accepts: tuple[Any, ...] = ()
    # Names a server path (a resource of trainer.config.path_refusal.INSTEAD): the studio
    # refuses a value other than null even where the CLI ignores it.
    server_path: str = ""


def ignored(reason: str, server_path: str = "") -> VerlRule:
    return VerlRule("ignored", reason, server_path=server_path)


def refused(reason: str, *accepts: Any) -> VerlRule:
    return VerlRule("refused", reason, accepts)


# Reasons shared by many keys.
SPEED = "speed or memory only"
PROFILER = "verl's profiler; RL Studio reports step timings as metrics (timing_s/*)"
FSDP = f"{SPEED}: RL Studio's FSDP2 wrapping is fixed (trainer/distributed/fsdp.py)"
PACKED = (
    f"{SPEED}: RL Studio never computes on padding (responses are packed behind their "
    "prompt, actor.pack_shared_prompts)"
)
KERNELS = f"{SPEED}: a kernel choice; RL Studio uses PyTorch's (speed.cpu_linear_kernel on CPU)"
SEQ_PARALLEL = f"{SPEED}: sequence parallelism; each sequence stays on one worker"
ENGINE = f"{SPEED}: a setting of verl's inference server; RL Studio's engine has its own"
INTERPOLATED = "verl fills it in from another key"
TEXT_ONLY = "RL Studio trains text models; image, video and audio columns are not read"
REMOTE_CODE = "remote code is never run: a model that needs it fails to load, saying so"
ENTROPY = f"{SPEED}: how verl computes the entropy; the values are the same"
FSDP2_ONLY = "RL Studio trains with FSDP2; Megatron and other engines are not supported"
TORCH_COMPILE = f"{SPEED}: torch.compile"
CHECKPOINT = "RL Studio's checkpoints always hold the model, optimizer and the rest"
LOG_PROB_MB = f"{SPEED}: log-probs are computed in micro-batches of actor.micro_batch_size"
LOG_PROB_TOKENS = f"{SPEED}: token budgets follow actor.max_tokens_per_micro_batch"
OFFLOAD_ONE_SWITCH = (
    f"{SPEED}: the reference model and the critic are offloaded with the actor "
    "(actor.cpu_offload is one switch for every FSDP2 model)"
)


def optim_rules(prefix: str) -> dict[str, VerlRule]:
    return {
        f"{prefix}optimizer": refused("RL Studio's optimiser is AdamW", "AdamW"),
        f"{prefix}optimizer_impl": refused("RL Studio's AdamW is torch.optim's", "torch.optim"),
        f"{prefix}total_training_steps": ignored(
            "verl fills it in from the run's length; the schedule follows trainer.total_steps"
        ),
        f"{prefix}num_cycles": refused("RL Studio's cosine decays once (0.5 cycles)", 0.5),
        f"{prefix}zero_indexed_step": ignored(
            "an off-by-one in where verl's schedule starts; RL Studio's has no such switch"
        ),
        f"{prefix}override_optimizer_config": refused(
            "extra optimiser arguments; RL Studio's AdamW takes lr, betas and weight decay",
            None,
            {},
        ),
        # One argument at a time (b178a3cd5's Megatron scripts: optimizer offload and
        # precision-aware options).
        f"{prefix}override_optimizer_config.": refused(
            "extra optimiser arguments; RL Studio's AdamW takes lr, betas and weight decay"
        ),
        # Megatron's optimizer spelling of the schedule (FSDP's is lr_scheduler_type).
        f"{prefix}lr_decay_style": refused(
            f"{FSDP2_ONLY} (Megatron's optimizer schedule; lr_scheduler_type maps)"
        ),
    }


def fsdp_rules(prefix: str, role: str) -> dict[str, VerlRule]:
    rules = {
        f"{prefix}wrap_policy.": ignored(FSDP),
        f"{prefix}reshard_after_forward": ignored(FSDP),
        f"{prefix}fsdp_size": ignored(FSDP),
        f"{prefix}forward_prefetch": ignored(FSDP),
        f"{prefix}use_orig_params": ignored(FSDP),
        f"{prefix}use_no_sync_for_gradient_accumulation": ignored(FSDP),
        f"{prefix}pad_to_length": ignored(PACKED),
        f"{prefix}pad_to_length_bucket": ignored(PACKED),
        f"{prefix}forward_only": ignored(FSDP),
        f"{prefix}turbo_config.": ignored(FSDP),
        # b178a3cd5's FSDP mixed-precision dtypes (param, reduce, buffer): fixed here, as
        # `dtype` is.
        f"{prefix}mixed_precision.": ignored(
            "mixed precision is fixed: on GPUs the distributed trainer computes in bfloat16 "
            "over float32 weights (trainer/distributed/fsdp.py)"
        ),
        f"{prefix}dtype": ignored(
            "mixed precision is fixed: on GPUs the distributed trainer computes in bfloat16 "
            "over float32 weights (trainer/distributed/fsdp.py)"
        ),
        f"{prefix}seed": ignored("initialisation is seeded by trainer.seed"),
        f"{prefix}full_determinism": ignored(f"{SPEED}: verl's determinism switch"),
        f"{prefix}ulysses_sequence_parallel_size": ignored(SEQ_PARALLEL),
        f"{prefix}entropy_from_logits_with_chunking": ignored(ENTROPY),
        f"{prefix}entropy_from_logits_chunk_size": ignored(ENTROPY),
        f"{prefix}entropy_checkpointing": ignored(ENTROPY),
        f"{prefix}use_torch_compile": ignored(TORCH_COMPILE),
        f"{prefix}strategy": refused(FSDP2_ONLY, "fsdp", "fsdp2"),
        f"{prefix}qat.enable": refused("quantisation-aware training", False),
        f"{prefix}qat.": ignored("read only with qat.enable, which is refused"),
    }
    if role != "actor":  # the actor's offload and dtype map (trainer.config.verl)
        for key in ("param_offload", "optimizer_offload", "offload_policy"):
            rules[f"{prefix}{key}"] = ignored(OFFLOAD_ONE_SWITCH)
        rules[f"{prefix}model_dtype"] = ignored("every model loads in model.dtype")
    return rules


def profiler_rules(prefix: str) -> dict[str, VerlRule]:
    return {f"{prefix}profiler.": ignored(PROFILER)}


def model_rules(prefix: str, role: str) -> dict[str, VerlRule]:
    actor = role == "actor"
    rules = {
        f"{prefix}hf_config_path": refused(
            "a model config other than the model folder's config.json", None
        ),
        f"{prefix}tokenizer_path": refused("a tokenizer other than the model folder's", None),
        f"{prefix}use_shm": ignored(f"{SPEED}: verl's shared-memory model loading"),
        f"{prefix}trust_remote_code": ignored(REMOTE_CODE),
        f"{prefix}custom_chat_template": refused(
            "a chat template other than the tokenizer's changes every prompt", None
        ),
        f"{prefix}external_lib": refused("imports a Python library into the trainer", None),
        f"{prefix}enable_activation_offload": ignored(f"{SPEED}: activation offload"),
        f"{prefix}use_remove_padding": ignored(PACKED),
        f"{prefix}exclude_modules": refused(
            "LoRA exclusions; adapters go on actor.lora.target_modules", None
        ),
        f"{prefix}use_liger": ignored(KERNELS),
        f"{prefix}use_fused_kernels": ignored(KERNELS),
        f"{prefix}fused_kernel_options.": ignored(KERNELS),
        f"{prefix}tiled_mlp.": ignored(f"{SPEED}: tiled MLP"),
        f"{prefix}mtp.enable": refused("multi-token prediction heads", False),
        f"{prefix}mtp.enable_train": refused("multi-token prediction heads", False),
        f"{prefix}mtp.": ignored("read only with mtp.enable, which is refused"),
        f"{prefix}lora.": ignored(
            "Megatron's LoRA settings; with FSDP verl reads model.lora_rank, lora_alpha "
            "and target_modules"
        ),
    }
    if not actor:
        rules |= {
            f"{prefix}enable_gradient_checkpointing": ignored(
                f"{SPEED}: the critic is small beside the actor; model.gradient_checkpointing "
                "is the actor's"
            ),
            f"{prefix}lora_rank": refused(
                "a LoRA critic; RL Studio's critic trains every weight", 0
            ),
            f"{prefix}lora_alpha": ignored("read only with critic.model.lora_rank above 0"),
            f"{prefix}override_config": refused(
                "the critic's model config; RL Studio's critic loads its model's config as it is",
                None,
                {},
            ),
            f"{prefix}override_config.": refused(
                "the critic's model config; RL Studio's critic loads its model's config as it is"
            ),
            f"{prefix}lora_adapter_path": refused(
                "a LoRA critic; RL Studio's critic trains every weight", None
            ),
            f"{prefix}target_modules": ignored("read only with critic.model.lora_rank above 0"),
            # verl's older spelling of critic.fsdp.*, still in its example scripts.
            f"{prefix}fsdp_config.": ignored(
                f"{SPEED}: verl's older spelling of critic.fsdp (FSDP tuning; the critic "
                "is offloaded with the actor, actor.cpu_offload)"
            ),
        }
    return rules


def actor_like_rules(prefix: str) -> dict[str, VerlRule]:
    """What the actor and the critic share: batch plumbing, loss scale, checkpoints."""
    return {
        f"{prefix}rollout_n": ignored(INTERPOLATED),
        f"{prefix}strategy": refused(FSDP2_ONLY, "fsdp", "fsdp2"),
        f"{prefix}ppo_micro_batch_size": ignored(
            f"{SPEED}: verl's deprecated global micro-batch; ppo_micro_batch_size_per_gpu maps"
        ),
        f"{prefix}loss_scale_factor": refused(
            "a fixed divisor of the loss; RL Studio's aggregation modes divide by their counts",
            None,
        ),
        f"{prefix}shuffle": ignored(
            "mini-batches take whole groups in a seeded, shuffled order every epoch "
            "(trainer/training/update.py)"
        ),
        f"{prefix}data_loader_seed": ignored("mini-batch order is seeded by trainer.seed"),
        f"{prefix}checkpoint.": ignored(CHECKPOINT),
        f"{prefix}ulysses_sequence_parallel_size": ignored(SEQ_PARALLEL),
        **profiler_rules(prefix),
    }

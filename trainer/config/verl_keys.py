"""verl's trainer-config keys that do not map onto RunConfig, each with its reason.

With `VERL_KEY_MAP` and the few combined rules in trainer.config.verl (the keys that
map), this classifies every key of verl's composed `ppo_trainer.yaml` (verl 0.9.1, kept
as tests/data/verl/): `trainer.config.verl.classify` is the one place that says what a
key is. A key here is

- ignored: accepted and reported once with its reason. It only tunes speed or memory,
  or is plumbing that verl needs and RL Studio does not; what is trained is the same.
- refused: it would change what is trained and RL Studio cannot honour it. The error
  names the key and the reason. Values listed in `accepts` are what RL Studio does
  anyway (`trainer.critic_warmup=0`), so those are accepted and reported as ignored.

A key ending in "." covers every key below it; the longest match wins, and an exact
key or a mapped key wins over any prefix.
"""

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
KERNELS = f"{SPEED}: a kernel choice; RL Studio uses PyTorch's (model.cpu_linear_kernel on CPU)"
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


def _optim(prefix: str) -> dict[str, VerlRule]:
    return {
        f"{prefix}optimizer": refused("RL Studio's optimiser is AdamW", "AdamW"),
        f"{prefix}optimizer_impl": refused("RL Studio's AdamW is torch.optim's", "torch.optim"),
        f"{prefix}lr_warmup_steps_ratio": refused(
            "warmup as a share of the run; set lr_warmup_steps instead", 0, 0.0
        ),
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
    }


def _fsdp(prefix: str, role: str) -> dict[str, VerlRule]:
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


def _profiler(prefix: str) -> dict[str, VerlRule]:
    return {f"{prefix}profiler.": ignored(PROFILER)}


def _model(prefix: str, role: str) -> dict[str, VerlRule]:
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
        f"{prefix}override_config": refused(
            "changes the model's architecture config (dropout, rope, ...)", None, {}
        ),
        f"{prefix}enable_activation_offload": ignored(f"{SPEED}: activation offload"),
        f"{prefix}use_remove_padding": ignored(PACKED),
        f"{prefix}exclude_modules": refused(
            "LoRA exclusions; adapters go on actor.lora.target_modules", None
        ),
        f"{prefix}lora_adapter_path": refused("starts from a trained LoRA adapter", None),
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
            f"{prefix}target_modules": ignored("read only with critic.model.lora_rank above 0"),
            # verl's older spelling of critic.fsdp.*, still in its example scripts.
            f"{prefix}fsdp_config.": ignored(
                f"{SPEED}: verl's older spelling of critic.fsdp (FSDP tuning; the critic "
                "is offloaded with the actor, actor.cpu_offload)"
            ),
        }
    return rules


def _actor_like(prefix: str) -> dict[str, VerlRule]:
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
        **_profiler(prefix),
    }


_ACTOR = f"{AR}.actor."
_REF = f"{AR}.ref."
_ROLLOUT = f"{AR}.rollout."

ACTOR_RULES: dict[str, VerlRule] = {
    **_optim(f"{_ACTOR}optim."),
    **_fsdp(f"{_ACTOR}fsdp_config.", "actor"),
    **_actor_like(_ACTOR),
    f"{_ACTOR}tau_pos": ignored("read only by verl's sapo loss (policy_loss.loss_mode)"),
    f"{_ACTOR}tau_neg": ignored("read only by verl's sapo loss (policy_loss.loss_mode)"),
    f"{_ACTOR}freeze_vision_tower": ignored(TEXT_ONLY),
    f"{_ACTOR}policy_loss.": ignored(
        "read only by policy losses RL Studio does not have; loss_mode picks ppo or gspo"
    ),
    f"{_ACTOR}calculate_entropy": ignored("actor/entropy is always reported"),
    f"{_ACTOR}calculate_sum_pi_squared": ignored("a diagnostic RL Studio does not compute"),
    f"{_ACTOR}use_prefix_grouper": ignored(
        f"{SPEED}: RL Studio already scores a group behind one copy of its prompt "
        "(actor.pack_shared_prompts)"
    ),
    f"{_ACTOR}use_torch_compile": ignored(TORCH_COMPILE),
    f"{_ACTOR}use_fused_kernels": ignored(KERNELS),
    f"{_ACTOR}qat.enable": refused("quantisation-aware training", False),
    f"{_ACTOR}qat.": ignored("read only with qat.enable, which is refused"),
    f"{_ACTOR}entropy_from_logits_with_chunking": ignored(ENTROPY),
    f"{_ACTOR}entropy_from_logits_chunk_size": ignored(ENTROPY),
    f"{_ACTOR}entropy_checkpointing": ignored(ENTROPY),
    f"{_ACTOR}pad_to_length": ignored(PACKED),
    f"{_ACTOR}use_remove_padding": ignored(PACKED),
}

REF_RULES: dict[str, VerlRule] = {
    **_fsdp(f"{_REF}fsdp_config.", "ref"),
    **_profiler(_REF),
    f"{_REF}rollout_n": ignored(INTERPOLATED),
    f"{_REF}strategy": refused(FSDP2_ONLY, "fsdp", "fsdp2"),
    f"{_REF}use_torch_compile": ignored(TORCH_COMPILE),
    f"{_REF}log_prob_micro_batch_size": ignored(LOG_PROB_MB),
    f"{_REF}log_prob_micro_batch_size_per_gpu": ignored(LOG_PROB_MB),
    f"{_REF}log_prob_use_dynamic_bsz": ignored(LOG_PROB_TOKENS),
    f"{_REF}log_prob_max_token_len_per_gpu": ignored(LOG_PROB_TOKENS),
    f"{_REF}ulysses_sequence_parallel_size": ignored(SEQ_PARALLEL),
    f"{_REF}entropy_from_logits_with_chunking": ignored(ENTROPY),
    f"{_REF}entropy_from_logits_chunk_size": ignored(ENTROPY),
    f"{_REF}entropy_checkpointing": ignored(ENTROPY),
    f"{_REF}pad_to_length": ignored(PACKED),
}

ROLLOUT_RULES: dict[str, VerlRule] = {
    **_profiler(_ROLLOUT),
    f"{_ROLLOUT}mode": ignored("verl's sync or async server mode; RL Studio generates in the step"),
    f"{_ROLLOUT}nnodes": ignored("the engine runs beside the actor on the run's workers"),
    f"{_ROLLOUT}n_gpus_per_node": ignored("the engine runs beside the actor on the run's workers"),
    f"{_ROLLOUT}full_determinism": ignored(f"{SPEED}: verl's determinism switch"),
    f"{_ROLLOUT}seed": ignored("sampling is seeded by trainer.seed"),
    f"{_ROLLOUT}prompt_length": ignored("follows data.max_prompt_length"),
    f"{_ROLLOUT}dtype": ignored("generation runs in the actor's dtype (model.dtype)"),
    f"{_ROLLOUT}gpu_memory_utilization": ignored(
        f"{SPEED}: RL Studio's vLLM engine reserves a fixed share of the GPU "
        "(trainer/rollout/vllm.py); the hf engine reserves none"
    ),
    f"{_ROLLOUT}tensor_model_parallel_size": ignored(
        f"{SPEED}: RL Studio's vLLM engine holds the model on one GPU (tensor parallel 1); "
        "the samples are the same"
    ),
    f"{_ROLLOUT}ignore_eos": refused(
        "generating past end-of-sequence changes every response", False
    ),
    f"{_ROLLOUT}enforce_eager": ignored(ENGINE),
    f"{_ROLLOUT}cudagraph_capture_sizes": ignored(ENGINE),
    f"{_ROLLOUT}free_cache_engine": ignored(ENGINE),
    f"{_ROLLOUT}data_parallel_size": ignored(ENGINE),
    f"{_ROLLOUT}expert_parallel_size": ignored(ENGINE),
    f"{_ROLLOUT}pipeline_model_parallel_size": ignored(ENGINE),
    f"{_ROLLOUT}max_num_batched_tokens": ignored(ENGINE),
    f"{_ROLLOUT}max_model_len": ignored(ENGINE),
    f"{_ROLLOUT}enable_chunked_prefill": ignored(ENGINE),
    f"{_ROLLOUT}enable_prefix_caching": ignored(ENGINE),
    f"{_ROLLOUT}scheduling_policy": ignored(ENGINE),
    f"{_ROLLOUT}disable_log_stats": ignored(ENGINE),
    f"{_ROLLOUT}multi_stage_wake_up": ignored(ENGINE),
    f"{_ROLLOUT}skip_tokenizer_init": ignored(ENGINE),
    f"{_ROLLOUT}engine_kwargs.": ignored(ENGINE),
    f"{_ROLLOUT}disaggregation.": ignored(ENGINE),
    f"{_ROLLOUT}prometheus.": ignored("verl's server metrics export"),
    f"{_ROLLOUT}checkpoint_engine.": ignored(f"{SPEED}: how verl syncs weights into its servers"),
    f"{_ROLLOUT}moe_load_balance_metrics_interval": ignored("a MoE diagnostic"),
    f"{_ROLLOUT}logprobs_mode": ignored(
        "RL Studio takes the old log-probs from the actor, not from the engine"
    ),
    f"{_ROLLOUT}calculate_log_probs": ignored(
        "RL Studio takes the old log-probs from the actor, not from the engine"
    ),
    f"{_ROLLOUT}load_format": ignored("the engine gets the actor's weights from the trainer"),
    f"{_ROLLOUT}layered_summon": ignored(f"{SPEED}: how verl gathers FSDP weights for the engine"),
    f"{_ROLLOUT}log_prob_micro_batch_size": ignored(LOG_PROB_MB),
    f"{_ROLLOUT}log_prob_micro_batch_size_per_gpu": ignored(LOG_PROB_MB),
    f"{_ROLLOUT}log_prob_use_dynamic_bsz": ignored(LOG_PROB_TOKENS),
    f"{_ROLLOUT}log_prob_max_token_len_per_gpu": ignored(LOG_PROB_TOKENS),
    f"{_ROLLOUT}do_sample": refused(
        "greedy training rollouts; set actor_rollout_ref.rollout.temperature=0 instead", True
    ),
    f"{_ROLLOUT}over_sample_rate": refused(
        "drops the slowest generations, which changes what is trained", 0, 0.0
    ),
    f"{_ROLLOUT}val_kwargs.top_k": ignored(
        "validation samples with rollout.val_temperature and rollout.val_n only; "
        "it does not change what is trained"
    ),
    f"{_ROLLOUT}val_kwargs.top_p": ignored(
        "validation samples with rollout.val_temperature and rollout.val_n only; "
        "it does not change what is trained"
    ),
    f"{_ROLLOUT}val_kwargs.do_sample": ignored(
        "validation is greedy when rollout.val_temperature is 0, sampled otherwise"
    ),
    f"{_ROLLOUT}router_config_path": refused("a router for verl's inference servers", None),
    f"{_ROLLOUT}agent.num_workers": ignored(f"{SPEED}: verl's agent-loop workers"),
    f"{_ROLLOUT}agent.default_agent_loop": ignored(
        "RL Studio picks single-turn or tool turns by rollout.multi_turn.enabled"
    ),
    f"{_ROLLOUT}agent.agent_loop_config_path": refused("custom agent loops (code)", None),
    f"{_ROLLOUT}agent.custom_async_server.": refused("a custom inference server (code)", None),
    f"{_ROLLOUT}trace.": ignored(
        "verl's rollout tracing; RL Studio stores rollout samples (logging.samples_per_step)"
    ),
    f"{_ROLLOUT}enable_rollout_routing_replay": refused("MoE routing replay", False),
    f"{_ROLLOUT}quantization": refused("quantised rollouts sample from another model", None),
    f"{_ROLLOUT}quantization_config_file": refused(
        "quantised rollouts sample from another model", None
    ),
    f"{_ROLLOUT}mtp": ignored(INTERPOLATED),
    f"{_ROLLOUT}qat": ignored(INTERPOLATED),
    f"{MT}.function_tool_path": refused("tools written as Python functions (code)", None),
    f"{MT}.interaction_config_path": refused(
        "interactions (a simulated user); RL Studio's environments are built-in tools", None
    ),
    f"{MT}.max_user_turns": refused("user turns come from an interaction", None),
    f"{MT}.use_inference_chat_template": refused(
        "re-rendering the conversation with the inference template changes the tokens trained on",
        False,
    ),
    f"{MT}.tokenization_sanity_check_mode": ignored("a consistency check of verl's tokens"),
    f"{MT}.num_repeat_rollouts": refused("repeated multi-turn rollouts", None),
}

_CRITIC = "critic."

CRITIC_RULES: dict[str, VerlRule] = {
    **_optim(f"{_CRITIC}optim."),
    **_fsdp(f"{_CRITIC}fsdp.", "critic"),
    **_model(f"{_CRITIC}model.", "critic"),
    **_actor_like(_CRITIC),
    f"{_CRITIC}enable": ignored(
        "the critic trains exactly when algorithm.adv_estimator needs one (gae)"
    ),
    f"{_CRITIC}ppo_micro_batch_size_per_gpu": ignored(
        f"{SPEED}: the critic's micro-batches are the actor's (actor.micro_batch_size)"
    ),
    f"{_CRITIC}forward_micro_batch_size": ignored(LOG_PROB_MB),
    f"{_CRITIC}forward_micro_batch_size_per_gpu": ignored(LOG_PROB_MB),
    f"{_CRITIC}use_dynamic_bsz": ignored(LOG_PROB_TOKENS),
    f"{_CRITIC}ppo_max_token_len_per_gpu": ignored(LOG_PROB_TOKENS),
    f"{_CRITIC}forward_max_token_len_per_gpu": ignored(LOG_PROB_TOKENS),
}

DATA_RULES: dict[str, VerlRule] = {
    "data.tokenizer": refused("a tokenizer other than the model folder's", None),
    "data.use_shm": ignored(f"{SPEED}: verl's shared-memory data loading"),
    "data.train_max_samples": refused(
        "a cap on the training rows; select the rows in the data instead", -1, None
    ),
    "data.reward_fn_key": refused(
        "RL Studio reads the data source from the `data_source` column", "data_source"
    ),
    "data.gen_batch_size": refused("a generation batch other than data.train_batch_size", None),
    "data.tool_config_path": refused(
        "tool schemas in the prompts; set actor_rollout_ref.rollout.multi_turn.tool_config_path",
        None,
    ),
    "data.function_tool_path": refused("tools written as Python functions (code)", None),
    "data.return_raw_input_ids": ignored("what verl's dataset hands its workers"),
    "data.return_raw_chat": ignored("what verl's dataset hands its workers"),
    "data.return_full_prompt": ignored("what verl's dataset hands its workers"),
    "data.return_multi_modal_inputs": ignored(TEXT_ONLY),
    "data.dataloader_num_workers": ignored(f"{SPEED}: data loader processes"),
    "data.image_patch_size": ignored(TEXT_ONLY),
    "data.image_key": ignored(TEXT_ONLY),
    "data.video_key": ignored(TEXT_ONLY),
    "data.audio_key": ignored(TEXT_ONLY),
    "data.mm_processor_kwargs": ignored(TEXT_ONLY),
    "data.validation_shuffle": ignored("the order of validation prompts does not change training"),
    "data.filter_overlong_prompts": ignored(
        "always on: prompts over data.max_prompt_length are left out and counted"
    ),
    "data.filter_overlong_prompts_workers": ignored(f"{SPEED}: filtering processes"),
    "data.truncation": ignored(
        "prompts over data.max_prompt_length are left out and counted, never truncated"
    ),
    "data.trust_remote_code": ignored(REMOTE_CODE),
    "data.custom_cls.": refused("a custom dataset class (code)", None),
    "data.apply_chat_template_kwargs": refused(
        "chat-template arguments (enable_thinking, ...) change every prompt", None, {}
    ),
}

_REWARD_SERVER = (
    "a generative reward model's inference server; RL Studio's reward models are sequence "
    "classifiers (reward.model)"
)
_REWARD_MANAGERS = ("naive", "batch", "prime", "dapo", None)
_REWARD_MANAGER = refused(
    "a reward manager other than verl's built-in ones; RL Studio tells per-sample from "
    "batch reward functions by their signature",
    *_REWARD_MANAGERS,
)

REWARD_RULES: dict[str, VerlRule] = {
    "reward_model.enable": ignored("a reward model is used when reward_model.model.path is set"),
    "reward_model.model.input_tokenizer": ignored(
        "the reward model reads the prompt and response as text with its own tokenizer"
    ),
    "reward_model.model.trust_remote_code": ignored(REMOTE_CODE),
    "reward_model.strategy": refused(FSDP2_ONLY, "fsdp", "fsdp2", None),
    "reward_model.reward_manager": _REWARD_MANAGER,
    "reward_model.num_workers": ignored(f"{SPEED}: RL Studio's reward sandbox sizes its pool"),
    "reward_model.reward_loop_source": refused("a custom reward loop (code)", None, "register"),
    "reward_model.reward_loop_module_path": refused("a custom reward loop (code)", None),
    "reward_model.reward_loop_class_name": refused("a custom reward loop (code)", None),
    "reward_model.model.external_lib": refused("imports a Python library", None),
    "reward_model.rollout.name": refused(_REWARD_SERVER, None),
    "reward_model.rollout.": ignored("read only with reward_model.rollout.name, refused"),
    "reward.num_workers": ignored(f"{SPEED}: RL Studio's reward sandbox sizes its pool"),
    "reward.reward_manager.source": ignored("where verl looks up its reward manager"),
    "reward.reward_manager.name": _REWARD_MANAGER,
    "reward.reward_manager.module.path": refused("a custom reward manager (code)", None),
    "reward.reward_manager.module.name": ignored("read only with reward_manager.module.path"),
    "reward.reward_model.enable": ignored(
        "a reward model is used when reward.reward_model.model_path is set"
    ),
    "reward.reward_model.rollout.name": refused(_REWARD_SERVER, None, "???"),
    "reward.reward_model.rollout.": ignored(
        "read only with reward.reward_model.rollout.name, refused"
    ),
    "reward.sandbox_fusion.": ignored(
        "verl's remote sandbox for code scorers; RL Studio's rewards run in its own sandbox"
    ),
    "sandbox_fusion.": ignored(
        "verl's remote sandbox for code scorers; RL Studio's rewards run in its own sandbox"
    ),
}

ALGORITHM_RULES: dict[str, VerlRule] = {
    "algorithm.rollout_correction.rollout_is": refused(
        "importance-sampling correction of rollout log-probs", None
    ),
    "algorithm.rollout_correction.rollout_rs": refused("rejection sampling of rollouts", None),
    "algorithm.rollout_correction.bypass_mode": refused(
        "training on the engine's log-probs", False
    ),
    "algorithm.rollout_correction.": ignored(
        "read only with rollout_is or rollout_rs, which are refused"
    ),
    "algorithm.filter_groups.metric": refused(
        "RL Studio filters groups by the spread of their reward (score)",
        "reward",
        "score",
        "seq_reward",
        "seq_final_reward",
        None,
    ),
    "algorithm.filter_groups.max_inflight_gen_batches": ignored(f"{SPEED}: generation overlap"),
    "algorithm.use_pf_ppo": refused("preference-feedback PPO reweighting", False),
    "algorithm.pf_ppo.": ignored("read only with use_pf_ppo, which is refused"),
}

_CHECKPOINTS_HERE = "RL Studio writes checkpoints to checkpoint.dir"
_SAMPLES_HERE = (
    "samples go to the reporters: the studio stores them, logging.jsonl_path writes them"
)
_ASYNC = "read only by verl's asynchronous trainer modes, which are refused"

TRAINER_RULES: dict[str, VerlRule] = {
    "trainer.balance_batch": ignored(f"{SPEED}: balances sequence lengths across verl's GPUs"),
    "trainer.project_name": ignored(
        "a studio run belongs to its project; on the command line trainer.experiment_name "
        "names the run"
    ),
    "trainer.log_val_generations": ignored(
        "validation samples are stored up to logging.val_samples_cap"
    ),
    "trainer.rollout_data_dir": ignored(_SAMPLES_HERE, server_path="run_folder"),
    "trainer.validation_data_dir": ignored(_SAMPLES_HERE, server_path="run_folder"),
    "trainer.nnodes": ignored("the run's workers come from `resources` (resources.num_workers)"),
    "trainer.n_gpus_per_node": ignored(
        "the run's workers come from `resources` (resources.gpus_per_worker)"
    ),
    "trainer.esi_redundant_time": ignored("a checkpoint deadline of verl's cluster"),
    "trainer.resume_from_path": refused(
        "resumes another run's checkpoint; RL Studio resumes from checkpoint.dir", None
    ),
    "trainer.checkpoint_callback_class": refused("a checkpoint callback (code)", None),
    "trainer.val_only": refused("a run that only validates; use `python -m trainer sample`", False),
    "trainer.critic_warmup": refused(
        "trains the critic alone for the first steps; RL Studio updates the actor from the "
        "first step",
        0,
    ),
    "trainer.default_hdfs_dir": ignored(
        f"copies checkpoints to HDFS; {_CHECKPOINTS_HERE}", server_path="run_folder"
    ),
    "trainer.del_local_ckpt_after_load": ignored(_CHECKPOINTS_HERE),
    "trainer.max_critic_ckpt_to_keep": ignored(
        "the critic is saved in the actor's checkpoints (checkpoint.keep_last)"
    ),
    "trainer.ray_wait_register_center_timeout": ignored(
        "start-up deadlines follow resources.worker_timeout_s"
    ),
    "trainer.use_v1": ignored("which of verl's trainer implementations runs"),
    "trainer.use_legacy_worker_impl": ignored("which of verl's worker implementations runs"),
    "trainer.v1.trainer_mode": refused("asynchronous training trains on older samples", "sync"),
    "trainer.v1.sampler.custom_sampler.": refused("a custom sampler (code)", None),
    "trainer.v1.sampler.sampler_kwargs": refused("a custom sampler's arguments", None, {}),
    "trainer.v1.": ignored(_ASYNC),
}

OTHER_RULES: dict[str, VerlRule] = {
    f"{AR}.hybrid_engine": refused(
        "the actor and the rollout engine always share their workers", True
    ),
    "global_profiler.": ignored(PROFILER),
    "distillation.enabled": refused("distillation from a teacher model", False),
    "distillation.": ignored("read only with distillation.enabled, which is refused"),
    "transfer_queue.": ignored(f"{SPEED}: verl's data transfer service"),
    "skip.rollout.enable": refused("replays rollouts dumped by an earlier run", False),
    "skip.rollout_tq.enable": refused("replays rollouts dumped by an earlier run", False),
    "skip.async_rollout.enable": refused("replays rollouts dumped by an earlier run", False),
    "skip.": ignored("read only when a skip.*.enable is set, which is refused"),
    "ray_kwargs.": ignored("RL Studio starts or joins Ray itself (RAY_ADDRESS)"),
}

VERL_RULES: dict[str, VerlRule] = {
    **ACTOR_RULES,
    **REF_RULES,
    **_model(f"{AR}.model.", "actor"),
    **ROLLOUT_RULES,
    **CRITIC_RULES,
    **DATA_RULES,
    **REWARD_RULES,
    **ALGORITHM_RULES,
    **TRAINER_RULES,
    **OTHER_RULES,
}

# Hydra's class selector, under every section.
TARGET_RULE = ignored("verl's Hydra class selector")

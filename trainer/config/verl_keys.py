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

from trainer.config.verl_rollout_keys import ROLLOUT_RULES
from trainer.config.verl_rule_parts import (
    AR,
    ENGINE,
    ENTROPY,
    FSDP2_ONLY,
    INTERPOLATED,
    KERNELS,
    LOG_PROB_MB,
    LOG_PROB_TOKENS,
    PACKED,
    PROFILER,
    REMOTE_CODE,
    SEQ_PARALLEL,
    SPEED,
    TEXT_ONLY,
    TORCH_COMPILE,
    VerlRule,
    actor_like_rules,
    fsdp_rules,
    ignored,
    model_rules,
    optim_rules,
    profiler_rules,
    refused,
)

_ACTOR = f"{AR}.actor."
_REF = f"{AR}.ref."

ACTOR_RULES: dict[str, VerlRule] = {
    **optim_rules(f"{_ACTOR}optim."),
    **fsdp_rules(f"{_ACTOR}fsdp_config.", "actor"),
    **actor_like_rules(_ACTOR),
    f"{_ACTOR}freeze_vision_tower": ignored(TEXT_ONLY),
    f"{_ACTOR}policy_loss.": ignored(
        "verl's plumbing below policy_loss (the bypass loss's copy of "
        "algorithm.rollout_correction); each loss's own settings are mapped"
    ),
    f"{_ACTOR}calculate_entropy": ignored("actor/entropy is always reported"),
    # b178a3cd5's MoE routing replay (verl 0.9.1 has no such key).
    f"{_ACTOR}router_replay.mode": refused("MoE routing replay", "disabled", None),
    f"{_ACTOR}router_replay.": ignored("read only with router_replay.mode, which is refused"),
    f"{_ACTOR}calculate_sum_pi_squared": ignored(
        "RL Studio computes the sum of squared token probabilities exactly when "
        "algorithm.adv_estimator needs it (the optimal token baselines)"
    ),
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
    **fsdp_rules(f"{_REF}fsdp_config.", "ref"),
    **profiler_rules(_REF),
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


_CRITIC = "critic."

CRITIC_RULES: dict[str, VerlRule] = {
    **optim_rules(f"{_CRITIC}optim."),
    **fsdp_rules(f"{_CRITIC}fsdp.", "critic"),
    **model_rules(f"{_CRITIC}model.", "critic"),
    **actor_like_rules(_CRITIC),
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

MEDIA = (
    "multimodal inputs (images, video, audio) for a vision or audio processor; RL Studio "
    "trains text models, and dropping them changes what each prompt asks"
)

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
    # Naming a media column asks for images, video or audio beside the prompt: dropping
    # them changes what each prompt asks, so it is refused (the rows are refused too,
    # trainer.data.formats.MEDIA_COLUMNS).
    "data.image_key": refused(MEDIA, None),
    "data.video_key": refused(MEDIA, None),
    "data.audio_key": refused(MEDIA, None),
    "data.mm_processor_kwargs": refused(MEDIA, None, {}),
    "data.mm_processor_kwargs.": refused(MEDIA),
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
}

# verl serves its reward model from an inference server (vLLM's classify task for a
# sequence classifier). RL Studio scores a sequence-classifier reward model in the trainer
# (trainer.models.reward_model), the same single logit per response; a generative reward
# model (a causal LM prompted to judge) is refused when the reward model loads.
_REWARD_SERVER = (
    "RL Studio scores the reward model (reward.model, a sequence classifier: its logit is "
    "the score) in the trainer instead of in a verl inference server; a generative reward "
    "model is refused when it loads"
)
_REWARD_MANAGERS = ("naive", "batch", "prime", "dapo", None)
_REWARD_MANAGER = refused(
    "a reward manager other than verl's built-in ones; RL Studio tells per-sample from "
    "batch reward functions by their signature",
    *_REWARD_MANAGERS,
)

_SANDBOX_FUSION = (
    "verl's remote code-execution service; RL Studio calls no network service: its "
    "built-in verl_code runs each row's program against its test cases in "
    "RL Studio's own reward sandbox (memory_limit_mb and max_concurrent map onto its "
    "limits, reward.kwargs)"
)

REWARD_RULES: dict[str, VerlRule] = {
    "reward_model.reward_kwargs.overlong_buffer_cfg.log": ignored(
        "verl's DAPO manager logs its overlong reward; RL Studio reports the shaped score"
    ),
    "reward.reward_kwargs.overlong_buffer_cfg.log": ignored(
        "verl's DAPO manager logs its overlong reward; RL Studio reports the shaped score"
    ),
    "reward_model.enable": ignored("a reward model is used when reward_model.model.path is set"),
    "reward_model.model.input_tokenizer": ignored(
        "the reward model reads the prompt and response as text with its own tokenizer"
    ),
    "reward_model.model.trust_remote_code": ignored(REMOTE_CODE),
    # b178a3cd5's legacy reward-model worker settings (not in verl 0.9.1's config).
    "reward_model.model.use_remove_padding": ignored(PACKED),
    "reward_model.model.fsdp_config.": ignored(
        f"{SPEED}: the reward model is scored without gradients in reward.model.dtype"
    ),
    "reward_model.strategy": refused(FSDP2_ONLY, "fsdp", "fsdp2", None),
    "reward_model.reward_manager": _REWARD_MANAGER,
    "reward_model.num_workers": ignored(f"{SPEED}: RL Studio's reward sandbox sizes its pool"),
    "reward_model.reward_loop_source": refused("a custom reward loop (code)", None, "register"),
    "reward_model.reward_loop_module_path": refused("a custom reward loop (code)", None),
    "reward_model.reward_loop_class_name": refused("a custom reward loop (code)", None),
    "reward_model.model.external_lib": refused("imports a Python library", None),
    "reward_model.rollout.name": ignored(_REWARD_SERVER),
    "reward_model.rollout.": ignored(f"{ENGINE} (the reward model's server)"),
    # b178a3cd5's switch between verl's reward loop and its older reward-model worker
    # (verl 0.9.1 has only the reward loop): either way the same model scores.
    "reward_model.use_reward_loop": ignored(
        "which of verl's components calls the reward model; " + _REWARD_SERVER
    ),
    "reward.num_workers": ignored(f"{SPEED}: RL Studio's reward sandbox sizes its pool"),
    "reward.reward_manager.source": ignored("where verl looks up its reward manager"),
    "reward.reward_manager.name": _REWARD_MANAGER,
    "reward.reward_manager.module.path": refused("a custom reward manager (code)", None),
    "reward.reward_manager.module.name": ignored("read only with reward_manager.module.path"),
    "reward.reward_model.enable": ignored(
        "a reward model is used when reward.reward_model.model_path is set"
    ),
    "reward.reward_model.rollout.name": ignored(_REWARD_SERVER),
    "reward.reward_model.rollout.": ignored(f"{ENGINE} (the reward model's server)"),
    # verl calls its sandbox_fusion service only from its built-in scorer of code rows
    # (data sources codecontests, apps, codeforces, taco) when no custom reward function is
    # set; without a url it runs them locally (prime_code). RL Studio's built-in verl_code
    # runs them in the reward sandbox, always: memory_limit_mb and max_concurrent are
    # mapped onto its limits (trainer.config.verl.VERL_KEY_MAP), and the url, with
    # anything else under sandbox_fusion, is accepted with a note.
    **{
        f"{prefix}sandbox_fusion.": ignored(_SANDBOX_FUSION)
        for prefix in ("", "reward.", "reward_model.")
    },
}

ALGORITHM_RULES: dict[str, VerlRule] = {
    "algorithm.filter_groups.metric": refused(
        "RL Studio filters groups by the spread of their reward (score)",
        "reward",
        "score",
        "seq_reward",
        "seq_final_reward",
        None,
    ),
    "algorithm.filter_groups.max_inflight_gen_batches": ignored(f"{SPEED}: generation overlap"),
    "algorithm.gdpo_reward_keys": refused(
        "GDPO over several reward components; RL Studio's reward is one score, and "
        "adv_estimator=gdpo normalises that",
        None,
    ),
    "algorithm.gdpo_reward_weights": ignored("read only with algorithm.gdpo_reward_keys"),
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
    # verl reads it only with resume_mode=resume_path (ray_trainer: _load_checkpoint), which is
    # refused with its reason; under auto or disable it changes nothing.
    "trainer.resume_from_path": ignored(
        "read only with trainer.resume_mode=resume_path (resuming another run's checkpoint, "
        "refused); RL Studio resumes from checkpoint.dir",
        server_path="run_folder",
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

# verl's Megatron engine settings, under every role that has one: RL Studio trains with
# FSDP2, so its tensor, pipeline, context and expert parallel sizes (and the rest) have no
# meaning here, and the parallel layout they ask for is not what runs.
MEGATRON_RULES: dict[str, VerlRule] = {
    f"{prefix}megatron.": refused(FSDP2_ONLY)
    for prefix in (_ACTOR, _REF, _CRITIC, "reward_model.", "reward.reward_model.")
}

# Keys in b178a3cd5's example scripts that neither verl 0.9.1's config nor b178a3cd5's has.
NOWHERE_RULES: dict[str, VerlRule] = {
    f"{AR}.model.torch_dtype": refused(
        "not a key of verl's config (0.9.1 or b178a3cd5); the model's dtype is "
        "actor_rollout_ref.actor.fsdp_config.model_dtype (model.dtype)"
    ),
}

VERL_RULES: dict[str, VerlRule] = {
    **MEGATRON_RULES,
    **NOWHERE_RULES,
    **ACTOR_RULES,
    **REF_RULES,
    **model_rules(f"{AR}.model.", "actor"),
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

"""verl's rollout keys (`actor_rollout_ref.rollout.*`) that do not map onto RunConfig, each
with its reason (see trainer.config.verl_keys)."""

from __future__ import annotations

from trainer.config.verl_rule_parts import (
    AR,
    ENGINE,
    INTERPOLATED,
    LOG_PROB_MB,
    LOG_PROB_TOKENS,
    MT,
    SPEED,
    VerlRule,
    ignored,
    profiler_rules,
    refused,
)

_ROLLOUT = f"{AR}.rollout."

ROLLOUT_RULES: dict[str, VerlRule] = {
    **profiler_rules(_ROLLOUT),
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
    # How verl reaches an SGLang HTTP server (the `_server` multi-turn configs): RL Studio
    # generates in its own engine, so there is no server to reach. `sglang_rollout_mode`
    # is read by no code of verl 0.9.1 or of the examples' commit.
    f"{_ROLLOUT}sglang_rollout_mode": ignored(
        "read by no code of verl 0.9.1 or b178a3cd5; RL Studio generates in its own engine"
    ),
    f"{_ROLLOUT}server.": ignored(
        "how verl reaches its SGLang HTTP server (timeouts, retries, connections); RL Studio "
        "generates in its own engine"
    ),
    # verl 0.9.1 declares it (workers/config/rollout.py: abort the rest once (1 - rate)
    # of the requests completed) but none of its code reads it: every response is kept.
    f"{_ROLLOUT}over_sample_rate": ignored(
        "declared by verl 0.9.1 and read by none of its code: verl keeps every response, "
        "as RL Studio does"
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
    f"{MT}.use_inference_chat_template": refused(
        "re-rendering the conversation with the inference template changes the tokens trained on",
        False,
    ),
    f"{MT}.tokenization_sanity_check_mode": ignored("a consistency check of verl's tokens"),
    f"{MT}.num_repeat_rollouts": refused("repeated multi-turn rollouts", None),
}

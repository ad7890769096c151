"""Accept the command-line overrides verl users already type.

`translate_verl_overrides` maps verl's dotted keys onto RunConfig's and returns
the ones it cannot translate, so the CLI can list them instead of guessing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trainer.config.overrides import ConfigError
from trainer.config.verl_tools import VERL_MULTI_TURN_KEYS, translate_multi_turn

_AR = "actor_rollout_ref"

# verl key -> our key (values pass through unchanged).
VERL_KEY_MAP: dict[str, str] = {
    "data.train_files": "data.train_files",
    "data.val_files": "data.val_files",
    "data.prompt_key": "data.prompt_key",
    "data.max_prompt_length": "data.max_prompt_length",
    "data.max_response_length": "rollout.max_new_tokens",
    "data.train_batch_size": "data.train_batch_size",
    "data.val_batch_size": "data.val_batch_size",
    "data.shuffle": "data.shuffle",
    "data.filter_overlong_prompts": "",  # always on in RL Studio: accepted, nothing to set
    "data.truncation": "",
    "data.seed": "trainer.seed",
    f"{_AR}.model.path": "model.path",
    f"{_AR}.model.enable_gradient_checkpointing": "model.gradient_checkpointing",
    f"{_AR}.model.lora_rank": "actor.lora.rank",
    f"{_AR}.model.lora_alpha": "actor.lora.alpha",
    f"{_AR}.model.target_modules": "actor.lora.target_modules",
    f"{_AR}.model.use_shm": "",  # verl's LoRA loading tweaks: nothing to set here
    f"{_AR}.rollout.load_format": "",
    f"{_AR}.actor.optim.lr": "actor.optim.lr",
    f"{_AR}.actor.optim.weight_decay": "actor.optim.weight_decay",
    f"{_AR}.actor.optim.lr_warmup_steps": "actor.optim.warmup_steps",
    f"{_AR}.actor.optim.min_lr_ratio": "actor.optim.min_lr_ratio",
    f"{_AR}.actor.optim.warmup_style": "actor.optim.schedule",
    f"{_AR}.actor.grad_clip": "actor.optim.grad_clip",
    f"{_AR}.actor.ppo_epochs": "actor.ppo_epochs",
    f"{_AR}.actor.ppo_mini_batch_size": "actor.ppo_mini_batch_size",
    f"{_AR}.actor.ppo_micro_batch_size_per_gpu": "actor.micro_batch_size",
    f"{_AR}.actor.use_kl_loss": "actor.use_kl_loss",
    f"{_AR}.actor.kl_loss_coef": "actor.kl_loss_coef",
    f"{_AR}.actor.kl_loss_type": "actor.kl_loss_type",
    f"{_AR}.actor.clip_ratio": "",  # expanded below to low and high
    f"{_AR}.actor.clip_ratio_low": "actor.clip_ratio_low",
    f"{_AR}.actor.clip_ratio_high": "actor.clip_ratio_high",
    f"{_AR}.actor.clip_ratio_c": "actor.clip_ratio_c",
    f"{_AR}.actor.loss_agg_mode": "actor.loss_agg_mode",
    f"{_AR}.actor.entropy_coeff": "actor.entropy_coeff",
    f"{_AR}.actor.policy_loss.loss_mode": "actor.policy_loss",
    f"{_AR}.rollout.name": "rollout.engine",
    f"{_AR}.rollout.n": "rollout.n",
    f"{_AR}.rollout.temperature": "rollout.temperature",
    f"{_AR}.rollout.top_p": "rollout.top_p",
    f"{_AR}.rollout.top_k": "rollout.top_k",
    f"{_AR}.rollout.response_length": "rollout.max_new_tokens",
    f"{_AR}.rollout.val_kwargs.temperature": "rollout.val_temperature",
    f"{_AR}.rollout.val_kwargs.n": "rollout.val_n",
    "critic.optim.lr": "critic.optim.lr",
    "critic.cliprange_value": "critic.cliprange_value",
    "critic.ppo_epochs": "critic.ppo_epochs",
    "algorithm.adv_estimator": "algorithm.adv_estimator",
    "algorithm.norm_adv_by_std_in_grpo": "algorithm.norm_adv_by_std_in_grpo",
    "algorithm.gamma": "algorithm.gamma",
    "algorithm.lam": "algorithm.lam",
    "algorithm.use_kl_in_reward": "algorithm.use_kl_in_reward",
    "algorithm.kl_penalty": "algorithm.kl_penalty",
    "algorithm.kl_ctrl.type": "algorithm.kl_ctrl.type",
    "algorithm.kl_ctrl.kl_coef": "algorithm.kl_ctrl.kl_coef",
    "algorithm.kl_ctrl.target_kl": "algorithm.kl_ctrl.target_kl",
    "algorithm.kl_ctrl.horizon": "algorithm.kl_ctrl.horizon",
    "algorithm.filter_groups.enable": "algorithm.dynamic_sampling.enabled",
    "algorithm.filter_groups.max_num_gen_batches": "algorithm.dynamic_sampling.max_gen_batches",
    "trainer.total_epochs": "trainer.total_epochs",
    "trainer.total_training_steps": "trainer.total_steps",
    "trainer.save_freq": "checkpoint.save_every",
    "trainer.test_freq": "trainer.val_every",
    "trainer.val_before_train": "trainer.val_before_train",
    "trainer.experiment_name": "trainer.experiment_name",
    "trainer.default_local_dir": "checkpoint.dir",
    "trainer.n_gpus_per_node": "",  # resources come from the run's resource request
    "trainer.nnodes": "",
    "trainer.logger": "",
    "trainer.project_name": "",
    "reward_model.enable": "",  # a reward model is used when its path is set
    "reward_model.model.path": "reward.model.path",
    "reward_model.model.input_tokenizer": "",  # it reads prompt + response as text
    "reward_model.model.trust_remote_code": "",  # never: local folders, no remote code
    "reward_model.micro_batch_size_per_gpu": "reward.model.batch_size",
    "reward_model.micro_batch_size": "reward.model.batch_size",
    "reward_model.max_length": "reward.model.max_length",
    "reward_model.strategy": "",
    # Its own resource pool: our worker group with one GPU per worker, as many workers
    # as the pool's GPUs (n_gpus_per_node x nnodes: `_reward_model_pool`).
    "reward_model.enable_resource_pool": "reward.model.placement",
    "reward_model.n_gpus_per_node": "reward.model.resources.num_workers",
    "reward_model.nnodes": "reward.model.resources.num_workers",
    "reward_model.reward_manager": "",  # batch functions are recognised by signature
    "custom_reward_function.path": "reward.custom_path",
    "custom_reward_function.name": "reward.custom_name",
}

# Values whose spelling differs between verl and RL Studio.
_VALUE_MAP: dict[str, Callable[[Any], Any]] = {
    "actor.optim.schedule": lambda v: v,
    "actor.policy_loss": lambda v: "ppo" if v in ("vanilla", "ppo") else v,
    # verl takes `all-linear` or a list; ours is always a list.
    "actor.lora.target_modules": lambda v: [v] if isinstance(v, str) else v,
    "reward.model.placement": lambda v: "worker_group" if _is_true(v) else "colocated",
}

_RM_POOL_SIZE = ("reward_model.n_gpus_per_node", "reward_model.nnodes")


def _is_true(value: Any) -> bool:
    return value is True or str(value).lower() == "true"


def _reward_model_pool(sizes: dict[str, Any]) -> list[tuple[str, Any]]:
    """verl's reward-model pool of n_gpus_per_node x nnodes GPUs as our worker group: one
    GPU per worker (a size left out counts 1)."""
    workers = 1
    for key in _RM_POOL_SIZE:
        value = sizes.get(key, 1)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"{key}={value!r}: a whole number of at least 1 is expected")
        workers *= value
    return [
        ("reward.model.resources.num_workers", workers),
        ("reward.model.resources.gpus_per_worker", 1.0),
    ]


def is_verl_key(key: str) -> bool:
    return (
        key.startswith((f"{_AR}.", "custom_reward_function.", "reward_model."))
        or key in VERL_KEY_MAP
    )


def translate_verl_overrides(
    pairs: list[tuple[str, Any]],
) -> tuple[list[tuple[str, Any]], list[str]]:
    """Return (translated (key, value) pairs, verl keys that have no equivalent)."""
    translated: list[tuple[str, Any]] = []
    unknown: list[str] = []
    pool_sizes: dict[str, Any] = {}
    for key, value in pairs:
        if key in _RM_POOL_SIZE:
            pool_sizes[key] = value
            continue
        if key == f"{_AR}.actor.clip_ratio":
            translated += [("actor.clip_ratio_low", value), ("actor.clip_ratio_high", value)]
            continue
        if key in VERL_MULTI_TURN_KEYS:  # tools and turns (trainer.config.verl_tools)
            translated += translate_multi_turn(key, value)
            continue
        if key not in VERL_KEY_MAP:
            unknown.append(key)
            continue
        target = VERL_KEY_MAP[key]
        if not target:
            continue
        if key == "custom_reward_function.path":
            translated.append(("reward.function", "custom"))
        translated.append((target, _VALUE_MAP.get(target, lambda v: v)(value)))
    if pool_sizes:
        translated += _reward_model_pool(pool_sizes)
    return translated, unknown

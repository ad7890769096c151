"""Accept the command-line overrides verl users already type.

Every key of verl's trainer config is mapped (here: `VERL_KEY_MAP` and the rules beside
it), ignored or refused (trainer.config.verl_keys), and `classify` says which.
`translate_verl` turns verl's overrides into ours, lists the ignored ones with their
reasons, and names the refused ones with theirs, so the CLI never guesses.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from trainer.config.model_overrides import refused_override
from trainer.config.overrides import ConfigError
from trainer.config.verl_keys import TARGET_RULE, VERL_RULES
from trainer.config.verl_tools import VERL_MULTI_TURN_KEYS, episode_budget, translate_multi_turn

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
    "data.seed": "trainer.seed",
    "data.val_max_samples": "data.max_val_samples",  # -1 (all): ours keeps its cap
    f"{_AR}.model.path": "model.path",
    f"{_AR}.model.enable_gradient_checkpointing": "model.gradient_checkpointing",
    f"{_AR}.model.lora_rank": "actor.lora.rank",
    f"{_AR}.model.lora_alpha": "actor.lora.alpha",
    f"{_AR}.model.target_modules": "actor.lora.target_modules",
    f"{_AR}.model.lora_adapter_path": "actor.lora.adapter_path",
    f"{_AR}.actor.optim.lr": "actor.optim.lr",
    f"{_AR}.actor.optim.weight_decay": "actor.optim.weight_decay",
    f"{_AR}.actor.optim.lr_warmup_steps": "actor.optim.warmup_steps",
    # Used when lr_warmup_steps is <= 0 (ours: 0), of the run's steps, as verl does.
    f"{_AR}.actor.optim.lr_warmup_steps_ratio": "actor.optim.warmup_ratio",
    f"{_AR}.actor.optim.min_lr_ratio": "actor.optim.min_lr_ratio",
    f"{_AR}.actor.optim.warmup_style": "actor.optim.schedule",
    f"{_AR}.actor.optim.lr_scheduler_type": "actor.optim.schedule",
    f"{_AR}.actor.optim.betas": "actor.optim.betas",
    f"{_AR}.actor.optim.clip_grad": "actor.optim.grad_clip",
    # The actor's FSDP2 offload: one switch for parameters, gradients and optimizer state
    # (and the reference and critic), on when any of verl's is (`_actor_offload`).
    f"{_AR}.actor.fsdp_config.param_offload": "actor.cpu_offload",
    f"{_AR}.actor.fsdp_config.optimizer_offload": "actor.cpu_offload",
    f"{_AR}.actor.fsdp_config.offload_policy": "actor.cpu_offload",
    f"{_AR}.actor.fsdp_config.model_dtype": "model.dtype",
    # A token budget per micro-batch, when use_dynamic_bsz is on (`_token_budget`).
    f"{_AR}.actor.use_dynamic_bsz": "actor.max_tokens_per_micro_batch",
    f"{_AR}.actor.ppo_max_token_len_per_gpu": "actor.max_tokens_per_micro_batch",
    f"{_AR}.nccl_timeout": "resources.worker_timeout_s",  # also the collectives' timeout
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
    # The policy losses' own settings (trainer.config.algorithm_section.PolicyLossOptions).
    f"{_AR}.actor.policy_loss.clip_cov_ratio": "actor.policy_loss_options.clip_cov_ratio",
    f"{_AR}.actor.policy_loss.clip_cov_lb": "actor.policy_loss_options.clip_cov_lb",
    f"{_AR}.actor.policy_loss.clip_cov_ub": "actor.policy_loss_options.clip_cov_ub",
    f"{_AR}.actor.policy_loss.kl_cov_ratio": "actor.policy_loss_options.kl_cov_ratio",
    f"{_AR}.actor.policy_loss.ppo_kl_coef": "actor.policy_loss_options.ppo_kl_coef",
    f"{_AR}.actor.policy_loss.dro_beta": "actor.policy_loss_options.dro_beta",
    f"{_AR}.actor.tau_pos": "actor.policy_loss_options.tau_pos",
    f"{_AR}.actor.tau_neg": "actor.policy_loss_options.tau_neg",
    f"{_AR}.rollout.name": "rollout.engine",
    f"{_AR}.rollout.n": "rollout.n",
    f"{_AR}.rollout.temperature": "rollout.temperature",
    f"{_AR}.rollout.top_p": "rollout.top_p",
    f"{_AR}.rollout.top_k": "rollout.top_k",
    f"{_AR}.rollout.response_length": "rollout.max_new_tokens",
    f"{_AR}.rollout.val_kwargs.temperature": "rollout.val_temperature",
    f"{_AR}.rollout.val_kwargs.n": "rollout.val_n",
    f"{_AR}.rollout.max_num_seqs": "rollout.micro_batch_size",  # sequences per engine call
    "critic.optim.lr": "critic.optim.lr",
    "critic.cliprange_value": "critic.cliprange_value",
    "critic.ppo_epochs": "critic.ppo_epochs",
    "critic.grad_clip": "critic.optim.grad_clip",
    "critic.optim.clip_grad": "critic.optim.grad_clip",
    "critic.optim.lr_warmup_steps": "critic.optim.warmup_steps",
    "critic.optim.lr_warmup_steps_ratio": "critic.optim.warmup_ratio",
    "critic.optim.warmup_style": "critic.optim.schedule",
    "critic.optim.lr_scheduler_type": "critic.optim.schedule",
    # RL Studio's critic updates on the actor's mini-batches: accepted when it equals the
    # actor's and refused otherwise (`VERL_TIES`).
    "critic.ppo_mini_batch_size": "actor.ppo_mini_batch_size",
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
    "algorithm.rollout_correction.rollout_is": "algorithm.rollout_correction.rollout_is",
    "algorithm.rollout_correction.rollout_is_threshold": (
        "algorithm.rollout_correction.rollout_is_threshold"
    ),
    "algorithm.rollout_correction.rollout_is_batch_normalize": (
        "algorithm.rollout_correction.rollout_is_batch_normalize"
    ),
    "algorithm.rollout_correction.rollout_rs": "algorithm.rollout_correction.rollout_rs",
    "algorithm.rollout_correction.rollout_rs_threshold": (
        "algorithm.rollout_correction.rollout_rs_threshold"
    ),
    "algorithm.rollout_correction.bypass_mode": "algorithm.rollout_correction.bypass_mode",
    "algorithm.rollout_correction.loss_type": "algorithm.rollout_correction.loss_type",
    "algorithm.use_pf_ppo": "algorithm.use_pf_ppo",
    "algorithm.pf_ppo.reweight_method": "algorithm.pf_ppo.reweight_method",
    "algorithm.pf_ppo.weight_pow": "algorithm.pf_ppo.weight_pow",
    "algorithm.filter_groups.enable": "algorithm.dynamic_sampling.enabled",
    "algorithm.filter_groups.max_num_gen_batches": "algorithm.dynamic_sampling.max_gen_batches",
    "trainer.total_epochs": "trainer.total_epochs",
    "trainer.total_training_steps": "trainer.total_steps",
    "trainer.save_freq": "checkpoint.save_every",
    "trainer.test_freq": "trainer.val_every",
    "trainer.val_before_train": "trainer.val_before_train",
    "trainer.experiment_name": "trainer.experiment_name",
    "trainer.default_local_dir": "checkpoint.dir",
    "trainer.max_actor_ckpt_to_keep": "checkpoint.keep_last",
    "trainer.resume_mode": "checkpoint.resume",
    "trainer.device": "resources.device",
    "trainer.logger": "logging.console",  # on when the list names `console`
    "reward_model.model.path": "reward.model.path",
    "reward_model.micro_batch_size_per_gpu": "reward.model.batch_size",
    "reward_model.micro_batch_size": "reward.model.batch_size",
    "reward_model.max_length": "reward.model.max_length",
    # Its own resource pool: our worker group with one GPU per worker, as many workers
    # as the pool's GPUs (n_gpus_per_node x nnodes: `_reward_model_pool`).
    "reward_model.enable_resource_pool": "reward.model.placement",
    "reward_model.n_gpus_per_node": "reward.model.resources.num_workers",
    "reward_model.nnodes": "reward.model.resources.num_workers",
    "custom_reward_function.path": "reward.custom_path",
    "custom_reward_function.name": "reward.custom_name",
    # verl 0.9's `reward` section spells the same settings again.
    "reward.custom_reward_function.path": "reward.custom_path",
    "reward.custom_reward_function.name": "reward.custom_name",
    "reward.reward_model.model_path": "reward.model.path",
    "reward.reward_model.enable_resource_pool": "reward.model.placement",
    "reward.reward_model.n_gpus_per_node": "reward.model.resources.num_workers",
    "reward.reward_model.nnodes": "reward.model.resources.num_workers",
    "custom_reward_function.reward_kwargs": "reward.kwargs",
    "data.apply_chat_template_kwargs": "data.chat_template_kwargs",
    # verl's DAPO reward manager's overlong shaping is our algorithm.overlong (the same
    # formula: trainer.algorithms.dapo.overlong_penalty), under either reward section.
    **{
        f"{section}.reward_kwargs.{key}": target
        for section in ("reward_model", "reward")
        for key, target in (
            ("overlong_buffer_cfg.enable", "algorithm.overlong.enabled"),
            ("overlong_buffer_cfg.len", "algorithm.overlong.buffer_len"),
            ("overlong_buffer_cfg.penalty_factor", "algorithm.overlong.penalty_factor"),
            # The formula's hard limit: ours is the response length (a tie, VERL_TIES).
            ("max_resp_len", "rollout.max_new_tokens"),
        )
    },
}

SKIP: Any = object()  # a value that sets nothing (verl's spelling of "the default")
_KL_NAMES: dict[str, str] = {"kl": "k1", "mse": "k2"}
_DTYPES: dict[str, str] = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}

# Values whose spelling differs between verl and RL Studio.
_VALUE_MAP: dict[str, Callable[[Any], Any]] = {
    "actor.optim.schedule": lambda v: v,
    "actor.policy_loss": lambda v: "ppo" if v in ("vanilla", "ppo") else v,
    # verl takes `all-linear` or a list; ours is always a list.
    "actor.lora.target_modules": lambda v: [v] if isinstance(v, str) else v,
    "reward.model.placement": lambda v: "worker_group" if _is_true(v) else "colocated",
    # verl takes one file or a list; ours is always a list.
    "data.train_files": lambda v: [v] if isinstance(v, str) else v,
    "data.val_files": lambda v: [v] if isinstance(v, str) else v,
    # verl's -1 means "never" / "from the ratio" where ours says 0.
    "actor.optim.warmup_steps": lambda v: _at_least_zero(v),
    "critic.optim.warmup_steps": lambda v: _at_least_zero(v),
    "checkpoint.save_every": lambda v: _at_least_zero(v),
    "trainer.val_every": lambda v: _at_least_zero(v),
    "rollout.top_k": lambda v: _at_least_zero(v),  # verl's -1 and our 0 both turn it off
    # verl's -1 (all rows) / 0 (no limit): ours keeps its own bound.
    "data.max_val_samples": lambda v: SKIP if _is_int(v) and v <= 0 else v,
    "algorithm.dynamic_sampling.max_gen_batches": lambda v: SKIP if _is_int(v) and v <= 0 else v,
    "algorithm.kl_penalty": lambda v: _KL_NAMES.get(v, v) if isinstance(v, str) else v,
    "actor.kl_loss_type": lambda v: _KL_NAMES.get(v, v) if isinstance(v, str) else v,
    "model.dtype": lambda v: _DTYPES.get(v, v) if isinstance(v, str) else v,
    "logging.console": lambda v: "console" in v if isinstance(v, list) else v == "console",
    "checkpoint.resume": lambda v: _resume_mode(v),
}

_RM_POOL_SIZE = (
    "reward_model.n_gpus_per_node",
    "reward_model.nnodes",
    "reward.reward_model.n_gpus_per_node",
    "reward.reward_model.nnodes",
)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _at_least_zero(value: Any) -> Any:
    return 0 if _is_int(value) and value < 0 else value


def _resume_mode(value: Any) -> str:
    modes = {"auto": "auto", "disable": "never"}
    if value not in modes:
        raise ConfigError(
            f"trainer.resume_mode={value!r}: RL Studio resumes from the latest checkpoint in "
            "checkpoint.dir (auto) or not at all (disable); resume_path is not supported"
        )
    return modes[value]


def _is_true(value: Any) -> bool:
    return value is True or str(value).lower() == "true"


def _reward_model_pool(sizes: dict[str, Any]) -> list[tuple[str, Any]]:
    """verl's reward-model pool of n_gpus_per_node x nnodes GPUs as our worker group: one
    GPU per worker (a size left out counts 1)."""
    workers = 1
    for suffix in ("n_gpus_per_node", "nnodes"):
        key = next((k for k in sizes if k.endswith(suffix)), suffix)
        value = sizes.get(key, 1)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"{key}={value!r}: a whole number of at least 1 is expected")
        workers *= value
    return [
        ("reward.model.resources.num_workers", workers),
        ("reward.model.resources.gpus_per_worker", 1.0),
    ]


# verl keys accepted only when they equal our setting of the same thing (see the comment
# at "critic.ppo_mini_batch_size" in VERL_KEY_MAP): checked on the composed config.
VERL_TIES: dict[str, str] = {
    "critic.ppo_mini_batch_size": "RL Studio's critic updates on the actor's mini-batches "
    "(trainer.training.step); drop the key or give it the actor's ppo_mini_batch_size",
    **{
        f"{section}.reward_kwargs.max_resp_len": "RL Studio's overlong shaping "
        "(algorithm.overlong) ends its ramp at the response length; drop the key or give "
        "it data.max_response_length"
        for section in ("reward_model", "reward")
    },
}

# Keys translated together: offload (any switch on), the token budget (only with
# use_dynamic_bsz) and the reward model's pool (n_gpus_per_node x nnodes).
_OFFLOAD = tuple(k for k, v in VERL_KEY_MAP.items() if v == "actor.cpu_offload")
_TOKEN_BUDGET = (f"{_AR}.actor.use_dynamic_bsz", f"{_AR}.actor.ppo_max_token_len_per_gpu")
_VERL_TOKEN_BUDGET = 16384  # verl's ppo_max_token_len_per_gpu when it is left out
_GROUPED = (*_OFFLOAD, *_TOKEN_BUDGET, *_RM_POOL_SIZE)
# verl's limits on its code-execution service are the built-in code scorer's limits on
# each test-case run here: `verl_code`'s keyword arguments (reward.kwargs.<name>, verl's
# names). `url` is accepted with a note (trainer.config.verl_keys): no service is called.
# verl passes these only to its own scorers, never to a custom reward function: beside
# one they are ignored (a function without **kwargs would refuse them).
_SANDBOX_KWARGS: dict[str, str] = {
    f"{prefix}sandbox_fusion.{name}": name
    for prefix in ("", "reward.", "reward_model.")
    for name in ("memory_limit_mb", "max_concurrent")
}
_CUSTOM_PATHS = ("custom_reward_function.path", "reward.custom_reward_function.path")
# Prefixes only verl uses: a key under them that is not classified is named as having
# no equivalent (instead of being called an unknown key of ours).
_VERL_ONLY = (f"{_AR}.", "custom_reward_function.", "reward_model.")

Kind = Literal["mapped", "ignored", "refused"]


@dataclass(frozen=True)
class Classified:
    kind: Kind
    reason: str = ""
    accepts: tuple[Any, ...] = ()
    server_path: str = ""


@dataclass(frozen=True)
class IgnoredKey:
    """A verl override that is accepted and has no effect here, with the reason."""

    key: str
    value: Any
    reason: str

    def describe(self) -> str:
        return f"{self.key}={self.value!r} is ignored: {self.reason}"


@dataclass
class VerlTranslation:
    pairs: list[tuple[str, Any]] = field(default_factory=list)
    ignored: list[IgnoredKey] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # "key=value: why"
    unknown: list[str] = field(default_factory=list)  # under verl's prefixes, unclassified
    ties: list[tuple[str, Any]] = field(default_factory=list)  # (VERL_TIES key, value)


# verl sets one keyword argument of the reward as `custom_reward_function.reward_kwargs.<name>`.
_REWARD_KWARG = "custom_reward_function.reward_kwargs."
# Mappings verl sets one entry of at a time (`prefix.<name>=value`): our mapping's entry.
_MAPPING_ENTRIES: dict[str, str] = {
    _REWARD_KWARG: "reward.kwargs.",
    "data.apply_chat_template_kwargs.": "data.chat_template_kwargs.",
}


def classify(key: str, ours: frozenset[str] = frozenset()) -> Classified | None:
    """What RL Studio does with verl's `key`: the one classification (mapped keys from
    VERL_KEY_MAP and `rollout.multi_turn`'s map, or named alike in `ours`, the schema's
    dotted paths; the rest from trainer.config.verl_keys). None: not a key we know."""
    if key in VERL_KEY_MAP or key in VERL_MULTI_TURN_KEYS or key in ours:
        return Classified("mapped")
    if any(key.startswith(p) and len(key) > len(p) for p in _MAPPING_ENTRIES):
        return Classified("mapped")  # one entry of a mapping (_MAPPING_ENTRIES)
    if key in _SANDBOX_KWARGS:
        return Classified("mapped")  # verl_code's keyword argument: reward.kwargs.<name>
    if key == _OVERRIDE_CONFIG or key.startswith(f"{_OVERRIDE_CONFIG}."):
        return Classified("mapped")  # model.config_overrides, key by key (_translate_override)
    rule = VERL_RULES.get(key)
    if rule is None:
        prefixes = [p for p in VERL_RULES if p.endswith(".") and key.startswith(p)]
        rule = VERL_RULES[max(prefixes, key=len)] if prefixes else None
    if rule is None and key.rpartition(".")[2] == "_target_":
        rule = TARGET_RULE
    if rule is None:
        return None
    return Classified(rule.kind, rule.reason, rule.accepts, rule.server_path)


def is_verl_key(key: str) -> bool:
    return classify(key) is not None or key.startswith(_VERL_ONLY)


def _accepted(value: Any, accepts: tuple[Any, ...]) -> bool:
    # True is not 1 here, nor False 0: `critic_warmup=False` is not a count.
    return any(value == a and isinstance(value, bool) == isinstance(a, bool) for a in accepts)


def translate_verl(pairs: list[tuple[str, Any]]) -> VerlTranslation:
    """Translate verl's (key, value) overrides: what they set here, what is ignored and
    why, what is refused and why, and the keys that must equal our settings."""
    out = VerlTranslation()
    grouped: dict[str, Any] = {}
    seen: set[str] = set()
    for key, value in pairs:
        found = classify(key)
        if found is None:
            out.unknown.append(key)
        elif found.kind == "refused" and not _accepted(value, found.accepts):
            out.refused.append(f"{key}={shown(value)}: {found.reason}")
        elif found.kind != "mapped":
            reason = found.reason
            if found.kind == "refused":
                reason = f"it is what RL Studio does (other values are refused: {reason})"
            if key not in seen:  # reported once, however often it is given
                out.ignored.append(IgnoredKey(key, value, reason))
                seen.add(key)
        elif key in VERL_MULTI_TURN_KEYS:  # tools and turns (trainer.config.verl_tools)
            try:  # an unreadable tool config or an unknown class is refused with the rest
                pairs_set, notes = translate_multi_turn(key, value)
            except ConfigError as exc:
                out.refused.append(_refusal(key, value, str(exc)))
                continue
            out.pairs += pairs_set
            out.ignored += [IgnoredKey(*note) for note in notes]
        elif key in VERL_TIES:
            out.ties.append((key, value))
        elif key == _ENGINE:
            _translate_engine(value, out)
        elif key == _OVERRIDE_CONFIG or key.startswith(f"{_OVERRIDE_CONFIG}."):
            _translate_override(key, value, out)
        elif key in _GROUPED:
            grouped[key] = value
        elif key in _SANDBOX_KWARGS and any(k in _CUSTOM_PATHS and v for k, v in pairs):
            reason = (
                "verl passes it only to its built-in code scorer, and a custom reward "
                "function is set"
            )
            out.ignored.append(IgnoredKey(key, value, reason))
        else:
            try:  # a value that cannot be translated is refused with the rest
                out.pairs += _translate_one(key, value)
            except ConfigError as exc:
                out.refused.append(_refusal(key, value, str(exc)))
    try:
        out.pairs += _translate_groups(grouped)
    except ConfigError as exc:
        out.refused.append(str(exc))
    try:
        out.pairs += _adapter_settings(pairs)
    except ConfigError as exc:
        out.refused.append(str(exc))
    out.pairs += episode_budget(out.pairs)
    return out


def shown(value: Any, limit: int = 80) -> str:
    """A value as a refusal names it: its repr, cut to `limit` characters (a chat
    template is thousands)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 5]}...{text[-1]}"


def _refusal(key: str, value: Any, message: str) -> str:
    """`key=value: why`, from a value map's message (which may name the key already)."""
    prefix = f"{key}={shown(value)}: "
    return message if message.startswith(f"{key}=") else prefix + message


_ADAPTER_PATH = f"{_AR}.model.lora_adapter_path"
# verl's LoRA settings, and the adapter_config.json field each is read from when a saved
# adapter is given without it (verl takes rank, alpha and targets from the adapter).
_ADAPTER_FIELDS = {
    f"{_AR}.model.lora_rank": ("r", "actor.lora.rank"),
    f"{_AR}.model.lora_alpha": ("lora_alpha", "actor.lora.alpha"),
    f"{_AR}.model.target_modules": ("target_modules", "actor.lora.target_modules"),
}


def _adapter_settings(pairs: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The LoRA settings of a saved adapter (lora_adapter_path) that the command line does
    not give: verl builds its adapters from the adapter's own config, so a command line
    with only the path trains with the adapter's rank, alpha and targets. Given ones stay,
    and the adapter must match them when it loads (trainer.models.lora.load_adapter)."""
    given = dict(pairs)
    path = given.get(_ADAPTER_PATH)
    missing = [key for key in _ADAPTER_FIELDS if key not in given]
    if not path or not missing:
        return []
    config_file = Path(str(path)) / "adapter_config.json"
    try:
        saved = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"{_ADAPTER_PATH}={path!s}: cannot read its adapter_config.json ({exc}); give "
            f"{', '.join(missing)} instead"
        ) from None
    out = []
    for key in missing:
        field_name, target = _ADAPTER_FIELDS[key]
        value = saved.get(field_name) if isinstance(saved, dict) else None
        if value is None:
            raise ConfigError(
                f"{_ADAPTER_PATH}={path!s}: its adapter_config.json has no {field_name!r}; "
                f"give {key}"
            )
        if target == "actor.lora.target_modules":
            value = sorted(value) if isinstance(value, list) else [value]
        out.append((target, value))
    return out


_ENGINE = f"{_AR}.rollout.name"
_OUR_ENGINES = ("hf", "vllm")
# verl's other inference servers: RL Studio generates with its vLLM engine instead.
# Sampling is defined by the policy and the sampling settings, not by the server, so the
# samples are those verl's server would draw (as with the tensor-parallel sizes, which
# are ignored for the same reason).
_OTHER_ENGINES = ("sglang", "trtllm")


def _translate_engine(value: Any, out: VerlTranslation) -> None:
    if value in _OUR_ENGINES:
        out.pairs.append(("rollout.engine", value))
    elif value in _OTHER_ENGINES:
        out.pairs.append(("rollout.engine", "vllm"))
        reason = (
            f"RL Studio generates with its vLLM engine (rollout.engine=vllm), which samples "
            f"from the same distribution as {value} given the same policy and sampling settings"
        )
        out.ignored.append(IgnoredKey(_ENGINE, value, reason))
    elif value is not None:
        out.refused.append(
            f"{_ENGINE}={value!r}: RL Studio generates with hf or vllm (sglang and trtllm "
            "are read as vllm)"
        )


# verl's override of the actor's model config: ours is model.config_overrides, which takes
# only the keys that leave every weight's shape as loaded (trainer.config.model_overrides).
_OVERRIDE_CONFIG = f"{_AR}.model.override_config"
# Read by verl to pick its attention kernel, not set on the config.
_ATTENTION_KERNEL = "attn_implementation"


def _translate_override(key: str, value: Any, out: VerlTranslation) -> None:
    if key == _OVERRIDE_CONFIG:
        if value is None:
            return
        if not isinstance(value, dict):
            out.refused.append(f"{key}={value!r}: a mapping of model config keys is expected")
            return
        items = [(f"{key}.{name}", name, item) for name, item in value.items()]
    else:
        below = key.removeprefix(f"{_OVERRIDE_CONFIG}.")  # rope_scaling.factor: nested
        items = [(key, below.partition(".")[0], value)]
    for typed, name, item in items:
        if name == _ATTENTION_KERNEL:
            reason = "speed or memory only: RL Studio picks the attention kernel itself"
            out.ignored.append(IgnoredKey(typed, item, reason))
        elif reason := refused_override(name):
            out.refused.append(f"{typed}={item!r}: {reason}")
        else:
            out.pairs.append(
                (f"model.config_overrides.{typed.removeprefix(_OVERRIDE_CONFIG + '.')}", item)
            )


def _translate_one(key: str, value: Any) -> list[tuple[str, Any]]:
    if key == f"{_AR}.actor.clip_ratio":
        return [("actor.clip_ratio_low", value), ("actor.clip_ratio_high", value)]
    for prefix, ours in _MAPPING_ENTRIES.items():
        if key.startswith(prefix):
            return [(f"{ours}{key.removeprefix(prefix)}", value)]
    if key in _SANDBOX_KWARGS:  # verl's null is its default: verl_code's stays
        return [] if value is None else [(f"reward.kwargs.{_SANDBOX_KWARGS[key]}", value)]
    target = VERL_KEY_MAP[key]
    if value is None and target != "trainer.total_steps":
        return []  # verl's null is its default; ours stays
    mapped = _VALUE_MAP.get(target, lambda v: v)(value)
    if mapped is SKIP:
        return []
    if target == "reward.custom_path":
        return [("reward.function", "custom"), (target, mapped)]
    return [(target, mapped)]


def _translate_groups(grouped: dict[str, Any]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    offload = [grouped[k] for k in _OFFLOAD if k in grouped]
    if offload:
        out.append(("actor.cpu_offload", any(_is_true(v) for v in offload)))
    if _is_true(grouped.get(_TOKEN_BUDGET[0], False)):
        out.append(
            ("actor.max_tokens_per_micro_batch", grouped.get(_TOKEN_BUDGET[1], _VERL_TOKEN_BUDGET))
        )
    pool = {k: v for k, v in grouped.items() if k in _RM_POOL_SIZE}
    if pool:
        out += _reward_model_pool(pool)
    return out


def same_name_value(key: str, value: Any) -> Any:
    """A key verl and RL Studio spell alike, with verl's value spelling translated
    (`algorithm.kl_penalty=kl` is our k1)."""
    if VERL_KEY_MAP.get(key) != key:
        return value
    return _VALUE_MAP.get(key, lambda v: v)(value)


def translate_verl_overrides(
    pairs: list[tuple[str, Any]],
) -> tuple[list[tuple[str, Any]], list[str]]:
    """Return (translated (key, value) pairs, verl keys that cannot be used here)."""
    out = translate_verl(pairs)
    return out.pairs, [*out.unknown, *(r.partition("=")[0] for r in out.refused)]

"""`RunConfig`: the one schema of a training run.

It drives the CLI (YAML + dotted overrides), API validation, the browser's run
form (via `model_json_schema()`) and the presets. Every field is documented
where it is declared and has its default here, nowhere else.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from trainer.config.algorithm_section import AdvantageEstimator as AdvantageEstimator
from trainer.config.algorithm_section import (
    PfPpoConfig,
    PolicyLossOptions,
    RolloutCorrectionConfig,
    algorithm_conflicts,
)
from trainer.config.algorithm_section import PolicyLoss as PolicyLoss
from trainer.config.chat_template import ChatTemplateValue, check_template_kwargs
from trainer.config.estimators import ESTIMATOR_TRAITS
from trainer.config.evaluation_section import EvaluationConfig as EvaluationConfig
from trainer.config.logging_section import LoggingConfig as LoggingConfig
from trainer.config.model_overrides import check_overrides
from trainer.config.multi_turn_section import MultiTurnConfig
from trainer.config.paths import (
    CriticModelPath,
    LoraAdapterPath,
    ModelPath,
    RunFolderPath,
    TrainFile,
    ValidationFile,
)
from trainer.config.resources_section import ResourcesConfig as ResourcesConfig
from trainer.config.reward_section import RewardConfig as RewardConfig
from trainer.config.reward_section import RewardModelConfig as RewardModelConfig
from trainer.config.sampling import DEFAULT_SAMPLING
from trainer.config.section import Dtype, Section
from trainer.config.speed_section import CpuLinearKernel as CpuLinearKernel
from trainer.config.speed_section import SpeedConfig as SpeedConfig

LossAggMode = Literal[
    "token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm"
]
KLEstimator = Literal["k1", "k2", "k3", "low_var_kl", "abs"]


class ModelConfig(Section):
    path: ModelPath = Field(
        "var/demo-model",
        description="Folder of a Hugging Face causal LM and its tokenizer (local path; "
        "nothing is downloaded). `rlstudio make-demo-model` builds the default.",
    )
    dtype: Dtype = Field("float32", description="Parameter dtype for training and rollout.")
    gradient_checkpointing: bool = Field(
        False, description="Recompute activations in backward to save memory."
    )
    config_overrides: dict[str, Any] = Field(
        default_factory=dict,
        description="Model config keys set at load (verl's `override_config`), only those "
        "that leave every weight's shape as loaded: context length, RoPE scaling, dropout, "
        "use_cache, ... (trainer/config/model_overrides.py lists them and why).",
    )

    @field_validator("config_overrides")
    @classmethod
    def _leaves_weights_as_loaded(cls, value: dict[str, Any]) -> dict[str, Any]:
        check_overrides(value)
        return value


class DataConfig(Section):
    train_files: list[TrainFile] = Field(
        default_factory=lambda: ["var/demo-data/arith/train.parquet"],
        description="Training files: verl parquet, JSONL, or prompt/answer tables.",
    )
    val_files: list[ValidationFile] = Field(
        default_factory=lambda: ["var/demo-data/arith/test.parquet"],
        description="Validation files, same formats. Empty disables validation.",
    )
    format: Literal["auto", "verl", "prompt_answer"] = Field(
        "auto",
        description="`verl`: columns data_source, prompt (chat messages), reward_model."
        "ground_truth, extra_info. `prompt_answer`: a prompt string and an answer column "
        "named by `prompt_key`/`answer_key`. `auto` picks by the columns present.",
    )
    prompt_key: str = Field("prompt", description="Column holding the prompt.")
    answer_key: str = Field("answer", description="Answer column for `prompt_answer` data.")
    data_source: str = Field(
        "default", description="data_source given to rows that have none (prompt_answer data)."
    )
    max_prompt_length: int = Field(
        128, ge=1, description="Prompts longer than this (in tokens) are filtered out and counted."
    )
    train_batch_size: int = Field(
        8, ge=1, description="Prompts per training step (each sampled `rollout.n` times)."
    )
    val_batch_size: int = Field(64, ge=1, description="Prompts per validation generation batch.")
    max_val_samples: int = Field(
        256, ge=1, description="Cap on validation prompts evaluated at each validation."
    )
    shuffle: bool = Field(True, description="Shuffle training prompts each epoch (seeded).")
    apply_chat_template: bool = Field(
        True, description="Render chat-message prompts with the tokenizer's chat template."
    )
    chat_template_kwargs: dict[str, ChatTemplateValue] = Field(
        default_factory=dict,
        description="Variables for the tokenizer's chat template (verl's "
        "`apply_chat_template_kwargs`), such as `enable_thinking: false` or "
        "`reasoning_effort: low`: every prompt and multi-turn context is rendered with them.",
    )

    @field_validator("chat_template_kwargs")
    @classmethod
    def _template_variables(cls, value: dict[str, Any]) -> dict[str, Any]:
        check_template_kwargs(value)
        return value


class RolloutConfig(Section):
    engine: Literal["hf", "vllm"] = Field(
        "hf", description="Generation engine: `hf` (transformers) or `vllm` (optional extra)."
    )
    n: int = Field(8, ge=1, description="Responses sampled per prompt (the GRPO group size).")
    # Sampling defaults are `SamplingParams`' (one definition); `n` is the group size.
    temperature: float = Field(
        DEFAULT_SAMPLING.temperature, ge=0.0, description="Sampling temperature; 0 is greedy."
    )
    top_p: float = Field(
        DEFAULT_SAMPLING.top_p, gt=0.0, le=1.0, description="Nucleus sampling mass."
    )
    top_k: int = Field(DEFAULT_SAMPLING.top_k, ge=0, description="Top-k sampling; 0 disables it.")
    max_new_tokens: int = Field(
        DEFAULT_SAMPLING.max_new_tokens, ge=1, description="Maximum response length in tokens."
    )
    stop: list[str] = Field(
        default_factory=list, description="Strings that end a response (kept in the text)."
    )
    micro_batch_size: int = Field(
        64, ge=1, description="Sequences generated together in one engine call."
    )
    val_temperature: float = Field(
        0.0, ge=0.0, description="Temperature for validation generations (0 = greedy)."
    )
    val_n: int = Field(1, ge=1, description="Samples per validation prompt (mean@N).")
    multi_turn: MultiTurnConfig = Field(default_factory=MultiTurnConfig)


class KLControlConfig(Section):
    type: Literal["fixed", "adaptive"] = Field(
        "fixed", description="Fixed beta, or adaptive towards `target_kl` (Ziegler et al.)."
    )
    kl_coef: float = Field(0.001, ge=0.0, description="Initial beta of the KL-in-reward penalty.")
    target_kl: float = Field(0.1, gt=0.0, description="Adaptive controller's KL target.")
    horizon: int = Field(10000, ge=1, description="Adaptive controller's horizon.")


class DynamicSamplingConfig(Section):
    enabled: bool = Field(
        False,
        description="DAPO: drop prompt groups whose rewards are all equal and "
        "keep generating until the batch holds `data.train_batch_size` prompts.",
    )
    max_gen_batches: int = Field(
        4, ge=1, description="Give up filling the batch after this many generation rounds."
    )


class OverlongConfig(Section):
    enabled: bool = Field(False, description="DAPO overlong reward shaping.")
    buffer_len: int = Field(
        8, ge=1, description="Soft zone before `rollout.max_new_tokens` where penalty ramps."
    )
    penalty_factor: float = Field(1.0, ge=0.0, description="Penalty at the hard length limit.")


class AlgorithmConfig(Section):
    adv_estimator: AdvantageEstimator = Field(
        "grpo",
        description="Advantage estimator, by verl's name: grpo, gae (with a critic), rloo, "
        "reinforce_plus_plus(_baseline), grpo_passk, remax (a greedy response per prompt is "
        "the baseline), opo, gpg, gdpo, optimal_token_baseline, tir_optimal_token_baseline; "
        "grpo_vectorized and rloo_vectorized are grpo and rloo.",
        # The estimators that train a critic: the run form offers a critic model for them.
        json_schema_extra={
            "x-needs-critic": [name for name, t in ESTIMATOR_TRAITS.items() if t.needs_critic]
        },
    )
    norm_adv_by_std_in_grpo: bool = Field(
        True, description="GRPO: divide by the group's std (False gives Dr.GRPO)."
    )
    gamma: float = Field(1.0, ge=0.0, le=1.0, description="Discount (GAE, REINFORCE++).")
    lam: float = Field(1.0, ge=0.0, le=1.0, description="GAE lambda.")
    use_kl_in_reward: bool = Field(
        False, description="Subtract beta * KL(old || ref) from token rewards."
    )
    kl_penalty: KLEstimator = Field("k1", description="KL estimator used in the reward.")
    kl_ctrl: KLControlConfig = Field(default_factory=KLControlConfig)
    dynamic_sampling: DynamicSamplingConfig = Field(default_factory=DynamicSamplingConfig)
    overlong: OverlongConfig = Field(default_factory=OverlongConfig)
    rollout_correction: RolloutCorrectionConfig = Field(default_factory=RolloutCorrectionConfig)
    use_pf_ppo: bool = Field(
        False,
        description="PF-PPO (arXiv 2409.06957): resample the batch, with replacement, by "
        "weights from the scores (`pf_ppo`). As verl 0.9.1, with adv_estimator=gae only.",
    )
    pf_ppo: PfPpoConfig = Field(default_factory=PfPpoConfig)


class OptimConfig(Section):
    lr: float = Field(1e-5, gt=0.0, description="Peak learning rate (AdamW).")
    weight_decay: float = Field(0.0, ge=0.0, description="AdamW weight decay.")
    betas: tuple[float, float] = Field((0.9, 0.999), description="AdamW betas.")
    warmup_steps: int = Field(0, ge=0, description="Linear warmup steps.")
    warmup_ratio: float = Field(
        0.0,
        ge=0.0,
        lt=1.0,
        description="Warmup as a share of the run's steps (rounded down), used when "
        "`warmup_steps` is 0 (verl's `lr_warmup_steps_ratio`).",
    )
    schedule: Literal["constant", "cosine", "linear"] = Field(
        "constant", description="LR schedule after warmup."
    )
    min_lr_ratio: float = Field(
        0.0, ge=0.0, le=1.0, description="Floor of cosine/linear decay as a fraction of `lr`."
    )
    grad_clip: float = Field(1.0, gt=0.0, description="Max global gradient norm.")


class LoraConfig(Section):
    rank: int = Field(
        0,
        ge=0,
        le=1024,
        description="LoRA rank (verl's `lora_rank`): above 0, only low-rank adapters on the "
        "actor train and the base weights stay frozen; 0 fine-tunes every weight.",
    )
    alpha: float = Field(
        16.0, gt=0.0, description="LoRA scale numerator: adapter updates are scaled by alpha/rank."
    )
    dropout: float = Field(
        0.0, ge=0.0, lt=1.0, description="Dropout on the adapters' input while training."
    )
    target_modules: list[str] = Field(
        default_factory=lambda: ["all-linear"],
        min_length=1,
        description="Module names that get adapters (e.g. `q_proj`, `v_proj`); `all-linear` "
        "is every linear layer but the output head.",
    )
    adapter_path: LoraAdapterPath | None = Field(
        None,
        description="A saved peft adapter folder (adapter_config.json + "
        "adapter_model.safetensors, as `export: adapter` writes) to start from instead of "
        "fresh adapters (verl's `lora_adapter_path`); its rank, alpha and adapted modules "
        "must be this section's.",
    )
    export: Literal["merged", "adapter"] = Field(
        "merged",
        description="What the final Hugging Face export holds: `merged` (a plain model folder "
        "with the adapters folded into the weights) or `adapter` (peft's adapter folder, "
        "which needs the base model beside it).",
    )

    @property
    def enabled(self) -> bool:
        return self.rank > 0


class ActorConfig(Section):
    optim: OptimConfig = Field(default_factory=OptimConfig)
    ppo_epochs: int = Field(1, ge=1, description="Passes over each rollout batch.")
    ppo_mini_batch_size: int = Field(
        8,
        ge=1,
        description="Prompts per optimizer step (times `rollout.n` responses), as verl; "
        "when `data.train_batch_size` is not a multiple, the last mini-batch is smaller.",
    )
    micro_batch_size: int = Field(
        16, ge=1, description="Responses per forward/backward; gradients accumulate."
    )
    pack_shared_prompts: bool = Field(
        True,
        description="Score each group's responses in one sequence behind one copy of their "
        "prompt, without response padding (same log-probs, fewer tokens; see "
        "trainer/training/packing.py).",
    )
    shared_prefix_scoring: bool = Field(
        True,
        description="With `pack_shared_prompts`: where long responses make it cheaper, score "
        "each prompt once and its responses as a batch behind its cached keys/values instead "
        "of block packing (trainer/training/shared_prefix.py; same values to float rounding). "
        "Single process only: distributed runs always block-pack. Off: a single process computes "
        "bit for bit what N workers compute.",
    )
    skip_zero_advantage_backward: bool = Field(
        True,
        description="Rows whose advantages are all zero (a group whose samples all scored "
        "the same, under GRPO) add nothing to the gradient when there is no entropy bonus "
        "and no KL loss: score them without autograd, for the reported metrics only, "
        "instead of back-propagating zeros through them (trainer/training/update.py). The gradient "
        "and the metrics are those of the whole batch.",
    )
    max_tokens_per_micro_batch: int | None = Field(
        None,
        ge=1,
        description="Token budget of one forward/backward (rows x padded length, or the "
        "packed layout's size), replacing `micro_batch_size`: micro-batches are filled by "
        "token count, padding trimmed; losses keep their exact weighting. A longer single "
        "response gets a micro-batch to itself. Empty: by `micro_batch_size`.",
    )
    cpu_offload: bool = Field(
        False,
        description="Distributed trainer: keep the FSDP2 shards of parameters, gradients and "
        "optimizer state in CPU memory (FSDP2 CPUOffloadPolicy; the optimizer step runs on "
        "the CPU). For models that do not fit on the GPUs otherwise; slower.",
    )
    policy_loss: PolicyLoss = Field(
        "ppo",
        description="Policy loss, by verl's name (`ppo` is verl's vanilla): ppo token-level "
        "clipped ratio; gspo sequence-level ratio; sapo soft gate; gpg plain policy gradient; "
        "clip_cov / kl_cov covariance-selected clip or KL penalty; geo_mean geometric-mean "
        "ratio (GMPO); cispo clipped importance weight on the log-prob; dppo_tv / dppo_kl "
        "divergence-masked; dro quadratic log-ratio penalty; bypass_mode the rollout "
        "correction's loss (set by algorithm.rollout_correction.bypass_mode).",
    )
    policy_loss_options: PolicyLossOptions = Field(default_factory=PolicyLossOptions)
    clip_ratio_low: float = Field(0.2, ge=0.0, description="PPO clip below 1 (epsilon_low).")
    clip_ratio_high: float = Field(
        0.2, ge=0.0, description="PPO clip above 1 (epsilon_high; DAPO clip-higher uses 0.28)."
    )
    clip_ratio_c: float = Field(3.0, gt=1.0, description="Dual-clip bound for negative advantages.")
    loss_agg_mode: LossAggMode = Field("token-mean", description="How token losses aggregate.")
    entropy_coeff: float = Field(0.0, ge=0.0, description="Entropy bonus coefficient.")
    use_kl_loss: bool = Field(False, description="Add coef * KL(policy || ref) to the loss.")
    kl_loss_coef: float = Field(0.001, ge=0.0, description="Coefficient of the KL loss.")
    kl_loss_type: KLEstimator = Field("low_var_kl", description="KL estimator of the KL loss.")
    lora: LoraConfig = Field(default_factory=LoraConfig)


class CriticModelConfig(Section):
    path: CriticModelPath | None = Field(
        None,
        description="Folder of the model the critic's body starts from (verl's "
        "`critic.model.path`), under a fresh value head; it must share the actor's "
        "tokenizer. Empty: the actor's `model.path`.",
    )


class CriticConfig(Section):
    model: CriticModelConfig = Field(default_factory=CriticModelConfig)
    optim: OptimConfig = Field(default_factory=lambda: OptimConfig(lr=1e-5))
    ppo_epochs: int = Field(1, ge=1, description="Passes of critic updates per batch.")
    cliprange_value: float = Field(0.5, gt=0.0, description="Value clipping range.")
    loss_agg_mode: LossAggMode = Field("token-mean", description="Value-loss aggregation.")


class CheckpointConfig(Section):
    dir: RunFolderPath = Field("var/checkpoints/demo", description="Where checkpoints are written.")
    save_every: int = Field(0, ge=0, description="Save every N steps; 0 saves only at the end.")
    keep_last: int = Field(2, ge=1, description="Checkpoints kept; older ones are deleted.")
    resume: Literal["auto", "never"] = Field(
        "auto", description="`auto` resumes from the latest checkpoint in `dir` if present."
    )
    save_hf: bool = Field(True, description="Also export the final model as a HF folder.")


class TrainerConfig(Section):
    total_epochs: int = Field(1, ge=1, description="Passes over the training data.")
    total_steps: int | None = Field(
        None, ge=1, description="Stop after this many steps (overrides epochs when set)."
    )
    val_every: int = Field(0, ge=0, description="Validate every N steps; 0 only at the end.")
    val_before_train: bool = Field(True, description="Validate once before the first step.")
    seed: int = Field(0, description="Seed of sampling, shuffling and initialisation.")
    experiment_name: str = Field("demo", description="Name shown in logs and reports.")


class RunConfig(Section):
    """A complete, validated training run."""

    model: ModelConfig = Field(default_factory=ModelConfig)
    data: DataConfig = Field(default_factory=DataConfig)
    rollout: RolloutConfig = Field(default_factory=RolloutConfig)
    algorithm: AlgorithmConfig = Field(default_factory=AlgorithmConfig)
    actor: ActorConfig = Field(default_factory=ActorConfig)
    critic: CriticConfig = Field(default_factory=CriticConfig)
    reward: RewardConfig = Field(default_factory=RewardConfig)
    resources: ResourcesConfig = Field(default_factory=ResourcesConfig)
    checkpoint: CheckpointConfig = Field(default_factory=CheckpointConfig)
    logging: LoggingConfig = Field(default_factory=LoggingConfig)
    trainer: TrainerConfig = Field(default_factory=TrainerConfig)
    evaluation: EvaluationConfig = Field(default_factory=EvaluationConfig)
    speed: SpeedConfig = Field(default_factory=SpeedConfig)

    @model_validator(mode="after")
    def _check_cross_field_rules(self) -> RunConfig:
        if self.actor.ppo_mini_batch_size > self.data.train_batch_size:
            raise ValueError(
                f"actor.ppo_mini_batch_size={self.actor.ppo_mini_batch_size} exceeds "
                f"data.train_batch_size={self.data.train_batch_size}; lower it or raise "
                "data.train_batch_size."
            )
        # A train_batch_size that is not a multiple of ppo_mini_batch_size leaves a smaller
        # last mini-batch, as verl's split does (trainer.training.update.iterate_minibatches);
        # its loss is the mean over its own tokens or rows, as every mini-batch's is.
        traits = ESTIMATOR_TRAITS[self.algorithm.adv_estimator]
        if traits.compares_within_group and self.rollout.n < 2 and not traits.one_response_groups:
            raise ValueError(
                f"algorithm.adv_estimator={self.algorithm.adv_estimator!r} compares responses "
                f"within a group; set rollout.n >= 2 (got {self.rollout.n})."
            )
        if self.actor.lora.adapter_path and not self.actor.lora.enabled:
            raise ValueError(
                "actor.lora.adapter_path starts from a saved adapter; set actor.lora.rank "
                "(verl's actor_rollout_ref.model.lora_rank) to the adapter's rank."
            )
        if self.reward.function == "custom" and not self.reward.custom_path:
            raise ValueError("reward.function='custom' needs reward.custom_path.")
        if self.speed.replay_rollout_outputs == "on" and (blockers := self.replay_blockers):
            raise ValueError(
                "speed.replay_rollout_outputs=on cannot apply to this run: "
                f"{'; '.join(blockers)}. Set it to auto (replay where it applies) or off."
            )
        if self.speed.cpu_linear_kernel == "onednn" and self.model.dtype != "float32":
            raise ValueError(
                "speed.cpu_linear_kernel=onednn multiplies float32 layers; model.dtype is "
                f"{self.model.dtype}. Set speed.cpu_linear_kernel to auto or torch."
            )
        if self.algorithm.overlong.enabled and (
            self.algorithm.overlong.buffer_len >= self.rollout.max_new_tokens
        ):
            raise ValueError(
                "algorithm.overlong.buffer_len must be below rollout.max_new_tokens "
                f"({self.algorithm.overlong.buffer_len} >= {self.rollout.max_new_tokens})."
            )
        algo = self.algorithm
        if problems := algorithm_conflicts(
            algo.adv_estimator,
            self.actor.policy_loss,
            self.actor.policy_loss_options,
            algo.rollout_correction,
            algo.use_pf_ppo,
            self.rollout.multi_turn.enabled,
        ):
            raise ValueError("; ".join(problems) + ".")
        return self

    @property
    def replay_blockers(self) -> list[str]:
        """Why the update cannot replay the rollout's linear outputs, as far as the config
        says (the device and the model are checked when the run starts); [] when it can."""
        actor = self.actor
        reasons = {
            "actor.ppo_epochs > 1 (the weights move between passes)": actor.ppo_epochs != 1,
            "several mini-batches per batch (the weights move between them)": (
                actor.ppo_mini_batch_size < self.data.train_batch_size
            ),
            "block-packed scoring (actor.pack_shared_prompts and actor.shared_prefix_scoring "
            "must both be on)": not (actor.pack_shared_prompts and actor.shared_prefix_scoring),
            "multi-turn episodes (tool tokens are prefilled, not decoded)": (
                self.rollout.multi_turn.enabled
            ),
            "resources.num_workers > 1": self.resources.num_workers != 1,
        }
        return [reason for reason, applies in reasons.items() if applies]

    @property
    def needs_reference_model(self) -> bool:
        """A frozen reference policy is loaded only when a KL term uses it."""
        return self.actor.use_kl_loss or self.algorithm.use_kl_in_reward

    @property
    def critic_model_path(self) -> str:
        """The folder the critic's body starts from: critic.model.path, else the actor's."""
        return self.critic.model.path or self.model.path

    @property
    def needs_critic(self) -> bool:
        return ESTIMATOR_TRAITS[self.algorithm.adv_estimator].needs_critic

"""Config of the algorithms beyond the estimator's name: the policy losses' own settings,
rollout correction and PF-PPO, each under the key verl 0.9.1 uses for it."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, field_validator, model_validator

from trainer.config.section import Section

# verl 0.9.1's ADV_ESTIMATOR_REGISTRY, every name (trainer/algorithms/advantages.py).
AdvantageEstimator = Literal[
    "grpo",
    "grpo_vectorized",
    "gae",
    "rloo",
    "rloo_vectorized",
    "reinforce_plus_plus",
    "reinforce_plus_plus_baseline",
    "grpo_passk",
    "remax",
    "opo",
    "gpg",
    "gdpo",
    "optimal_token_baseline",
    "tir_optimal_token_baseline",
]
# verl 0.9.1's POLICY_LOSS_REGISTRY, every name; `ppo` is verl's `vanilla`.
PolicyLoss = Literal[
    "ppo",
    "gspo",
    "sapo",
    "gpg",
    "clip_cov",
    "kl_cov",
    "geo_mean",
    "cispo",
    "dppo_tv",
    "dppo_kl",
    "dro",
    "bypass_mode",
]
RolloutIsLevel = Literal["token", "sequence"]
RolloutCorrectionLoss = Literal["ppo_clip", "reinforce"]
# verl's rejection criteria: a KL estimator (k1 = log-ratio bounds, k2, k3) per token, or
# summed, averaged or maxed over the sequence.
RolloutRsOption = Literal[
    "token_k1",
    "token_k2",
    "token_k3",
    "seq_sum_k1",
    "seq_sum_k2",
    "seq_sum_k3",
    "seq_mean_k1",
    "seq_mean_k2",
    "seq_mean_k3",
    "seq_max_k2",
    "seq_max_k3",
]
RS_OPTIONS: tuple[str, ...] = RolloutRsOption.__args__  # type: ignore[attr-defined]
PfPpoReweight = Literal["pow", "max_min", "max_random"]


def _number_as_text(value: object) -> object:
    """verl takes a threshold as a number or as text ('0.5_2.0', '0.1,0.5'); ours is text
    always, so the run form shows one text field."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value


ThresholdSpec = Annotated[str, BeforeValidator(_number_as_text)]


class PolicyLossOptions(Section):
    """verl's `actor.policy_loss.*` and `actor.tau_pos/tau_neg`: read by one loss each."""

    clip_cov_ratio: float = Field(
        0.0002,
        gt=0.0,
        le=1.0,
        description="clip_cov: share of valid tokens (at least one) whose gradient is cut "
        "among those with covariance in (clip_cov_lb, clip_cov_ub).",
    )
    clip_cov_lb: float = Field(1.0, description="clip_cov: lower covariance bound.")
    clip_cov_ub: float = Field(5.0, description="clip_cov: upper covariance bound.")
    kl_cov_ratio: float = Field(
        0.0002,
        gt=0.0,
        le=1.0,
        description="kl_cov: share of valid tokens (at least one), the highest covariance "
        "of advantage and log-prob, that get the |log-ratio| penalty.",
    )
    ppo_kl_coef: float = Field(
        0.1, ge=0.0, description="kl_cov: coefficient of the |log-ratio| penalty."
    )
    dro_beta: float | None = Field(
        None,
        gt=0.0,
        description="dro: coefficient of the quadratic log-ratio penalty (required for dro).",
    )
    tau_pos: float = Field(
        1.0, gt=0.0, description="sapo: gate temperature for tokens with positive advantage."
    )
    tau_neg: float = Field(
        1.05, gt=0.0, description="sapo: gate temperature for tokens with advantage <= 0."
    )


class RolloutCorrectionConfig(Section):
    """verl's `algorithm.rollout_correction`: correct for the rollout engine's log-probs
    differing from the trainer's (another kernel, precision or a stale policy).

    Weights and rejections compare the trainer's old log-probs with the engine's. RL
    Studio's hf engine samples with the trainer's own forward, so the two coincide there
    and every weight is 1; with vllm they differ.
    """

    rollout_is: RolloutIsLevel | None = Field(
        None,
        description="Importance weights pi_old / pi_rollout per `token` or per `sequence` "
        "(product over its tokens), truncated at `rollout_is_threshold`. Empty: none.",
    )
    rollout_is_threshold: ThresholdSpec = Field(
        "2.0",
        description="Upper bound of the weights (truncation), or `lower_upper` such as "
        "`0.5_2.0`: weights outside the band are zeroed (IcePop).",
    )
    rollout_is_batch_normalize: bool = Field(
        False, description="Divide the weights by their batch mean (token or sequence)."
    )
    rollout_rs: str | None = Field(
        None,
        description="Rejection: comma-separated criteria from "
        + ", ".join(RS_OPTIONS)
        + "; a token (token_*) or sequence (seq_*) over its threshold leaves the loss.",
    )
    rollout_rs_threshold: ThresholdSpec | None = Field(
        None,
        description="One threshold for all criteria or one per criterion, comma-separated; "
        "k1 criteria take `lower_upper` ratio bounds (a single value u means 1/u_u).",
    )
    bypass_mode: bool = Field(
        False,
        description="Skip the trainer's old log-prob pass: the engine's log-probs are the "
        "old ones, and the loss (`loss_type`) corrects inside the update.",
    )
    loss_type: RolloutCorrectionLoss = Field(
        "ppo_clip",
        description="bypass_mode: `ppo_clip` (the clipped ratio corrects) or `reinforce` "
        "(log-prob times the truncated weight).",
    )

    @field_validator("rollout_rs")
    @classmethod
    def _known_options(cls, value: str | None) -> str | None:
        if value is None:
            return None
        unknown = [o.strip() for o in value.split(",") if o.strip() not in RS_OPTIONS]
        if unknown or not value.strip():
            raise ValueError(
                f"rollout_rs={value!r}: unknown criteria {unknown}; "
                f"allowed: {', '.join(RS_OPTIONS)}"
            )
        return value

    @model_validator(mode="after")
    def _rs_needs_threshold(self) -> RolloutCorrectionConfig:
        if self.rollout_rs is not None and self.rollout_rs_threshold is None:
            raise ValueError("algorithm.rollout_correction.rollout_rs needs rollout_rs_threshold")
        return self

    @property
    def enabled(self) -> bool:
        return self.rollout_is is not None or self.rollout_rs is not None or self.bypass_mode


class PfPpoConfig(Section):
    reweight_method: PfPpoReweight = Field(
        "pow",
        description="PF-PPO resampling weight of a response from its score s: `pow` |s|^p, "
        "`max_min` 1 for the batch's best and worst score else 0, `max_random` 0.4 for the "
        "best else 0.1.",
    )
    weight_pow: float = Field(2.0, ge=0.0, description="PF-PPO `pow`: the exponent p.")


def algorithm_conflicts(
    adv_estimator: str,
    policy_loss: str,
    options: PolicyLossOptions,
    correction: RolloutCorrectionConfig,
    use_pf_ppo: bool,
    multi_turn: bool,
) -> list[str]:
    """What the run's algorithm settings contradict, each naming the keys; [] when none."""
    problems = []
    if use_pf_ppo and adv_estimator != "gae":
        problems.append(
            "algorithm.use_pf_ppo resamples the batch after GAE only (as verl 0.9.1, which "
            f"skips it for other estimators); adv_estimator is {adv_estimator!r}: set it to "
            "gae or turn use_pf_ppo off"
        )
    if policy_loss == "dro" and options.dro_beta is None:
        problems.append("actor.policy_loss=dro needs actor.policy_loss_options.dro_beta > 0")
    if policy_loss == "bypass_mode" and not correction.bypass_mode:
        problems.append(
            "actor.policy_loss=bypass_mode is the loss of "
            "algorithm.rollout_correction.bypass_mode=true; set that instead"
        )
    if correction.bypass_mode and policy_loss not in ("ppo", "bypass_mode"):
        problems.append(
            "algorithm.rollout_correction.bypass_mode uses its own loss "
            f"(rollout_correction.loss_type); actor.policy_loss={policy_loss!r} would be "
            "replaced (verl does so silently): set actor.policy_loss to ppo"
        )
    if adv_estimator == "remax" and multi_turn:
        problems.append(
            "adv_estimator=remax decodes one greedy response per prompt as its baseline; "
            "multi-turn episodes (rollout.multi_turn.enabled) have no single greedy response"
        )
    return problems

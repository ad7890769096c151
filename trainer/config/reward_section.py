"""The `reward` section of the run config: the reward function and learned reward models,
their weights in the combined reward, and where each reward model runs."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from trainer.config.paths import RewardCodePath, RewardModelPath
from trainer.config.resources_section import WorkerResources
from trainer.config.reward_kwargs import MAX_KWARGS_BYTES, kwargs_problem
from trainer.config.section import Dtype, Section

# The reward function's source name when each row's data source chooses its scorer.
BY_DATA_SOURCE = "by_data_source"
# A few judges at most: each is a full forward pass over every response of every step.
MAX_EXTRA_MODELS = 4


class RewardModelResources(WorkerResources):
    num_workers: int = Field(
        1,
        ge=1,
        le=64,
        description="Reward-model workers (`reward.model.placement=worker_group`): each "
        "loads the model and scores a contiguous share of every batch.",
    )


class RewardModelConfig(Section):
    path: RewardModelPath | None = Field(
        None,
        description="Folder of a Hugging Face sequence-classification model with one label "
        "(its logit is the score) and its tokenizer; empty: no reward model. "
        "`rlstudio make-demo-model` builds a tiny one in var/demo-reward-model.",
    )
    name: str = Field(
        "reward_model",
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9_.-]+$",
        description="Its reward component's name (metrics `critic/score/<name>/mean`).",
    )
    weight: float = Field(1.0, description="Weight of its score in the combined reward.")
    dtype: Dtype = Field("float32", description="Parameter dtype of the reward model.")
    max_length: int = Field(
        512, ge=8, le=32768, description="Prompt + response tokens scored; longer is cut left."
    )
    batch_size: int = Field(16, ge=1, le=4096, description="Responses scored per forward pass.")
    placement: Literal["colocated", "worker_group"] = Field(
        "colocated",
        description="Where it runs: `colocated` loads it in the process that scores rewards "
        "(the trainer's driver), on the trainer's device; `worker_group` on Ray workers of "
        "its own (`reward.model.resources`), each holding a copy and scoring a share of "
        "every batch, so it can have GPUs (or nodes) apart from the actor's. A run with a "
        "worker group goes through Ray even with one trainer worker.",
    )
    resources: RewardModelResources = Field(default_factory=RewardModelResources)


class RewardConfig(Section):
    function: str | None = Field(
        None,
        description="A built-in reward (`arith`, `exact_match`, `numeric`, `gsm8k`, "
        "`countdown`, `verl_default`, ...) or `custom` to load `custom_path`. Unset: each "
        "row is scored by the built-in its `data_source` names, as verl does without a "
        "custom reward function (`arith` rows by `arith`, `countdown` by `countdown`, "
        "verl's GSM8K, MATH, DAPO and Search-R1 sources by `verl_default`, its code "
        "sources (codecontests, apps, codeforces, taco) by `verl_code`); data with any "
        "other data source is refused at load, before step 1. Unset with a reward model: "
        "the reward model scores alone, as in verl.",
    )
    custom_path: RewardCodePath | None = Field(
        None, description="Python file defining the reward function (verl signature)."
    )
    custom_name: str = Field("compute_score", description="Function name in `custom_path`.")
    kwargs: dict[str, Any] = Field(
        default_factory=dict,
        description="Keyword arguments passed to every call of the reward function (verl's "
        "`custom_reward_function.reward_kwargs`), JSON values of at most "
        f"{MAX_KWARGS_BYTES} bytes in all; e.g. `reward.kwargs={{format_score: 0.1}}`. "
        "Built-ins take theirs too (`gsm8k`: `method`, `format_score`, `score`).",
    )
    executor: Literal["inprocess", "sandbox"] = Field(
        "sandbox",
        description="Run rewards in the sandbox pool, or `inprocess`: inside the trainer "
        "process, unsandboxed (trusted code only; logged as a warning; refused by the studio).",
    )
    max_error_rate: float = Field(
        0.5, ge=0.0, le=1.0, description="Fail the run when a batch's reward error rate exceeds it."
    )
    function_weight: float = Field(
        1.0,
        description="Weight of the reward function's score when a reward model is set; the "
        "combined reward is the weighted sum, each source reported as its own component. "
        "0 keeps the function as a reported metric only.",
    )
    validation_function: str | None = Field(
        None,
        description="A built-in reward that scores validation in place of the run's reward, "
        "so that runs trained on different rewards are compared on one score (a sweep over "
        "reward versions names one, docs/sweeps.md); checked when the run starts, as "
        "`function` is. Unset: validation is scored as training is.",
    )
    model: RewardModelConfig = Field(default_factory=RewardModelConfig)
    extra_models: list[RewardModelConfig] = Field(
        default_factory=list,
        max_length=MAX_EXTRA_MODELS,
        description="More reward models, each one more reward source with its own `name` "
        "(distinct), `weight`, `placement` and `resources`, fields as in `reward.model`; "
        "e.g. `reward.extra_models=[{path: var/judge, name: judge, weight: 0.5}]`. Each needs "
        "a `path`. verl has one reward model, so they have no verl counterpart.",
    )

    @field_validator("kwargs")
    @classmethod
    def _check_kwargs(cls, kwargs: dict[str, Any]) -> dict[str, Any]:
        problem = kwargs_problem(kwargs)
        if problem:
            raise ValueError(problem)
        return kwargs

    def model_sections(self) -> list[tuple[str, RewardModelConfig]]:
        """Every reward model in use with its config path: `reward.model` when its path is
        set, then `reward.extra_models.<i>`."""
        sections = [("reward.model", self.model)] if self.model.path else []
        return sections + [(f"reward.extra_models.{i}", m) for i, m in enumerate(self.extra_models)]

    def function_source_name(self) -> str:
        """The reward function's source name (`critic/score/<name>/mean`): `by_data_source`
        when each row's data source chooses its scorer."""
        if self.function is None:
            return BY_DATA_SOURCE
        return self.custom_name if self.function == "custom" else self.function

    @model_validator(mode="after")
    def _check_reward_models(self) -> RewardConfig:
        for i, extra in enumerate(self.extra_models):
            if not extra.path:
                raise ValueError(
                    f"reward.extra_models.{i}.path is empty: every extra reward model needs "
                    "the folder of a sequence-classification model (or remove it)"
                )
        # With no function, reward models score alone (trainer.rewards.resolution).
        function = [self.function_source_name()] if self.function is not None else []
        names = function + [m.name for _, m in self.model_sections()]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(
                f"reward sources need distinct names (the reward function's and each reward "
                f"model's `name`): {', '.join(repeated)} is used more than once"
            )
        return self

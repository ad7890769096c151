"""The `evaluation` section of the run config: a run that evaluates models instead of
training one (`python -m trainer run` with `evaluation.models` set; the studio's
evaluations, docs/evaluate.md).

Each model answers every prompt of `data.val_files` (`k` responses per prompt, greedy or
sampled at `temperature`), the run's reward scores every response, and the trainer
reports each response as a sample (split `eval`, step = the model's position, from 1) and
each model's scores as metrics at that step. The training sections other than `data`,
`rollout` (lengths, stop strings, top-p/k), `reward` and `resources.device` are unused.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from trainer.config.paths import EvaluatedModelPath
from trainer.config.section import Section

MAX_EVALUATED_MODELS = 64  # a run's checkpoints and a few baselines
MAX_K = 64
MAX_PROMPT_IDS = 1000


class EvaluatedModel(Section):
    label: str = Field(
        min_length=1,
        max_length=100,
        description="The model's name in results and samples (e.g. `base`, `step 40`).",
    )
    path: EvaluatedModelPath = Field(
        description="A Hugging Face model folder, or a trainer checkpoint folder (`actor.pt` "
        "and `meta.json`, loaded onto the base model its meta names)."
    )


class EvaluationConfig(Section):
    models: list[EvaluatedModel] = Field(
        default_factory=list,
        max_length=MAX_EVALUATED_MODELS,
        description="Models to evaluate, in order; empty: the run trains. Used only by "
        "evaluations.",
    )
    k: int = Field(
        1,
        ge=1,
        le=MAX_K,
        description="Responses per prompt and model (pass@k and mean@k are over these).",
    )
    greedy: bool = Field(
        True, description="Greedy decoding (one response per prompt: needs `k=1`)."
    )
    temperature: float = Field(
        1.0, gt=0.0, le=2.0, description="Sampling temperature when `greedy` is off."
    )
    pass_threshold: float = Field(
        1.0,
        description="A response passes (for pass@k) when its score is at least this.",
    )
    max_prompts: int | None = Field(
        None, ge=1, description="Evaluate only the first N prompts; empty: all of them."
    )
    prompt_ids: list[str] = Field(
        default_factory=list,
        max_length=MAX_PROMPT_IDS,
        description="Only the prompts with these ids (`<file index>:<row index>`, the group "
        "id of the samples generated from them), each of which must name exactly one prompt "
        "of `data.val_files`; empty: every prompt.",
    )
    batch_size: int | None = Field(
        None,
        ge=1,
        le=4096,
        description="Prompts generated together (times `k` sequences); empty: as many as "
        "fill the engine's batch, `rollout.micro_batch_size // k`.",
    )

    @model_validator(mode="after")
    def _greedy_means_one(self) -> EvaluationConfig:
        if self.greedy and self.k != 1:
            raise ValueError(
                f"evaluation.greedy=true gives one response per prompt, so evaluation.k must be "
                f"1 (got {self.k}); set evaluation.greedy=false to sample {self.k} at "
                "evaluation.temperature"
            )
        labels = [m.label for m in self.models]
        repeated = sorted({label for label in labels if labels.count(label) > 1})
        if repeated:
            raise ValueError(
                f"evaluation.models need distinct labels; {', '.join(repeated)} is repeated"
            )
        return self

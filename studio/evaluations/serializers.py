"""Request and response shapes of the evaluations API (the views are in
studio/api/evaluations/evaluations.py)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from studio.evaluations.questions import question_of
from studio.evaluations.results import evaluated, results, settings_of
from studio.references.summary import RunInputsSerializer, run_inputs
from studio.runs.models import Run
from studio.runs.serializers import PRIORITY_MAX, PRIORITY_MIN
from trainer.config.evaluation_section import MAX_EVALUATED_MODELS, MAX_K
from trainer.rewards.builtins import BUILTIN_NAMES

EVALUATED_KINDS = [("model", "A model of the project"), ("checkpoint", "A run's checkpoint")]


class EvaluatedModelChoiceSerializer(serializers.Serializer[dict[str, Any]]):
    model = serializers.IntegerField(
        required=False, min_value=1, help_text="A model of the project (/api/models/)."
    )
    run = serializers.IntegerField(
        required=False, min_value=1, help_text="With `step`: a checkpoint of this run."
    )
    step = serializers.IntegerField(required=False, min_value=0, help_text="The checkpoint's step.")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("model" in attrs) == ("run" in attrs or "step" in attrs):
            raise serializers.ValidationError(
                "Name a model ({model: id}) or a checkpoint ({run: id, step: n}), one of the two."
            )
        if ("run" in attrs) != ("step" in attrs):
            raise serializers.ValidationError("A checkpoint needs both `run` and `step`.")
        return attrs


class SamplingRequestSerializer(serializers.Serializer[dict[str, Any]]):
    """How every model answers (shared by both ways of creating an evaluation)."""

    name = serializers.CharField(max_length=200, required=False, help_text="Shown in lists.")
    k = serializers.IntegerField(
        min_value=1, max_value=MAX_K, default=1, help_text="Responses per prompt and model."
    )
    greedy = serializers.BooleanField(default=True, help_text="Greedy decoding (needs k=1).")
    temperature = serializers.FloatField(
        min_value=0.01, max_value=2.0, default=1.0, help_text="Sampling temperature (not greedy)."
    )
    max_prompts = serializers.IntegerField(
        min_value=1, required=False, allow_null=True, help_text="Only the first N prompts."
    )
    max_new_tokens = serializers.IntegerField(
        min_value=1,
        max_value=32768,
        required=False,
        allow_null=True,
        help_text="Longest response; default: the run's (or the demo preset's) setting.",
    )
    priority = serializers.IntegerField(
        min_value=PRIORITY_MIN, max_value=PRIORITY_MAX, default=0, help_text="Higher starts first."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["greedy"] and attrs["k"] != 1:
            raise serializers.ValidationError(
                {
                    "k": [
                        f"Greedy decoding gives one response per prompt; set k=1 or greedy=false "
                        f"(got k={attrs['k']})."
                    ]
                }
            )
        return attrs


class EvaluationCreateSerializer(SamplingRequestSerializer):
    project = serializers.SlugField(help_text="The project's slug.")
    models = serializers.ListField(
        child=EvaluatedModelChoiceSerializer(),
        min_length=1,
        max_length=MAX_EVALUATED_MODELS,
        help_text="Models and checkpoints to evaluate, in order (the first is the baseline).",
    )
    dataset_version = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, help_text="Evaluate on every row of it."
    )
    validation_of_run = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        help_text="Evaluate on this run's validation data (and, unless given, its reward).",
    )
    reward_version = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    builtin_reward = serializers.ChoiceField(
        choices=list(BUILTIN_NAMES),
        required=False,
        allow_null=True,
        help_text="A built-in reward instead of a reward version.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs = super().validate(attrs)
        if attrs.get("reward_version") and attrs.get("builtin_reward"):
            raise serializers.ValidationError(
                {"builtin_reward": ["Choose a reward version or a built-in reward, not both."]}
            )
        return attrs


class RunCheckpointsEvaluationSerializer(SamplingRequestSerializer):
    run = serializers.IntegerField(
        min_value=1, help_text="Evaluate every checkpoint of this run and its base model."
    )


class AskCheckpointsSerializer(SamplingRequestSerializer):
    sample = serializers.IntegerField(
        min_value=1,
        help_text="A rollout sample of a training run (split train or val): its prompt is "
        "answered by every checkpoint of the run and its base model.",
    )


class SampleQuestionSerializer(serializers.Serializer[dict[str, Any]]):
    sample = serializers.IntegerField(allow_null=True, help_text="null once the sample is gone.")
    run = serializers.IntegerField(help_text="The sample's run, whose checkpoints answer.")
    run_name = serializers.CharField()
    step = serializers.IntegerField(help_text="The sample's training step.")
    split = serializers.ChoiceField(choices=["train", "val"])
    group_id = serializers.CharField(help_text="The prompt's id in the run's rows.")
    prompt = serializers.CharField(help_text="The prompt as the sample's run rendered it.")


class EvaluatedModelSerializer(serializers.Serializer[dict[str, Any]]):
    step = serializers.IntegerField(
        help_text="Its position (from 1): the step of its samples in the rollout explorer."
    )
    label = serializers.CharField()  # type: ignore[assignment]  # a field, not Field.label
    kind = serializers.ChoiceField(choices=EVALUATED_KINDS)
    model = serializers.IntegerField(allow_null=True, help_text="The project model's id.")
    run = serializers.IntegerField(allow_null=True, help_text="A checkpoint's run.")
    run_name = serializers.CharField(allow_null=True)
    checkpoint_step = serializers.IntegerField(allow_null=True, help_text="A checkpoint's step.")


class EvaluationScoresSerializer(serializers.Serializer[dict[str, Any]]):
    prompts = serializers.IntegerField()
    responses = serializers.IntegerField()
    k = serializers.IntegerField()
    mean_score = serializers.FloatField()
    pass_at_k = serializers.FloatField(help_text="Unbiased pass@k (Chen et al. 2021).")
    mean_at_k = serializers.FloatField(help_text="Mean over prompts of each prompt's mean score.")
    mean_length = serializers.FloatField(help_text="Mean response length, tokens.")
    error_rate = serializers.FloatField(help_text="Share of responses the reward failed on.")


class EvaluationModelResultSerializer(EvaluatedModelSerializer):
    scores = EvaluationScoresSerializer(
        allow_null=True, help_text="null until its responses arrive."
    )
    by_data_source = serializers.DictField(child=EvaluationScoresSerializer())


class EvaluationSettingsSerializer(serializers.Serializer[dict[str, Any]]):
    k = serializers.IntegerField()
    greedy = serializers.BooleanField()
    temperature = serializers.FloatField()
    pass_threshold = serializers.FloatField()
    max_prompts = serializers.IntegerField(allow_null=True)
    max_new_tokens = serializers.IntegerField()


class EvaluationProgressSerializer(serializers.Serializer[dict[str, Any]]):
    responses = serializers.IntegerField(help_text="Responses stored so far.")
    total = serializers.IntegerField(allow_null=True, help_text="null until the job starts.")
    fraction = serializers.FloatField(allow_null=True)


class EvaluationResultsSerializer(serializers.Serializer[dict[str, Any]]):
    settings = EvaluationSettingsSerializer()
    models = EvaluationModelResultSerializer(many=True)
    progress = EvaluationProgressSerializer()


class EvaluationSerializer(serializers.ModelSerializer[Run]):
    project = serializers.CharField(source="project.slug", read_only=True)
    created_by = serializers.CharField(source="created_by.username", read_only=True)
    settings = serializers.SerializerMethodField()
    models = serializers.SerializerMethodField()
    inputs = serializers.SerializerMethodField(
        help_text="The prompts (dataset and validation), the reward, and the base model."
    )
    question = serializers.SerializerMethodField(
        help_text='The sample an "Ask the checkpoints" evaluation asks about; null otherwise.'
    )

    @extend_schema_field(EvaluationSettingsSerializer)
    def get_settings(self, run: Run) -> dict[str, Any]:
        return settings_of(run)

    @extend_schema_field(EvaluatedModelSerializer(many=True))
    def get_models(self, run: Run) -> list[dict[str, Any]]:
        return evaluated(run)

    @extend_schema_field(RunInputsSerializer)
    def get_inputs(self, run: Run) -> dict[str, Any]:
        return run_inputs(run)

    @extend_schema_field(SampleQuestionSerializer(allow_null=True))
    def get_question(self, run: Run) -> dict[str, Any] | None:
        return question_of(run)

    class Meta:
        model = Run
        fields = [
            "id",
            "project",
            "name",
            "status",
            "status_reason",
            "priority",
            "settings",
            "models",
            "inputs",
            "question",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
            "last_error",
        ]
        read_only_fields = fields


class EvaluationDetailSerializer(EvaluationSerializer):
    results = serializers.SerializerMethodField()

    @extend_schema_field(EvaluationResultsSerializer)
    def get_results(self, run: Run) -> dict[str, Any]:
        return results(run)

    class Meta(EvaluationSerializer.Meta):
        fields = [*EvaluationSerializer.Meta.fields, "results"]
        read_only_fields = fields

"""Serializers of a run's rollout samples: samples, groups, labels and exports
(studio/api/rollouts/samples.py)."""

from __future__ import annotations

import math
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from studio.telemetry.ingest.records import TURN_ROLES
from studio.telemetry.models import RolloutSample, SampleLabel
from studio.telemetry.series import STEP_MAX

LABEL_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9 _.:/-]{0,63}$"
LABEL_HELP = "1-64 characters: letters, digits, space, _ . : / - (e.g. reward-hacking)."


class FiniteFloatField(serializers.FloatField):
    """NaN and infinity become null: JSON has no such numbers."""

    def to_representation(self, value: float) -> float | None:  # type: ignore[override]
        number = float(value)
        return number if math.isfinite(number) else None


class SampleLabelSerializer(serializers.ModelSerializer):
    author = serializers.CharField(source="author.username", read_only=True)

    class Meta:
        model = SampleLabel
        fields = ["id", "label", "note", "author", "created_at"]
        read_only_fields = fields


class SampleLabelWriteSerializer(serializers.Serializer):
    # A declared field named `label` shadows Field.label only in the type stubs.
    label = serializers.RegexField(LABEL_PATTERN, help_text=LABEL_HELP)  # type: ignore[assignment]
    note = serializers.CharField(max_length=2000, allow_blank=True, default="")


class RolloutSampleSerializer(serializers.ModelSerializer):
    score = FiniteFloatField(allow_null=True)
    advantage = FiniteFloatField(allow_null=True)
    labels = SampleLabelSerializer(many=True, read_only=True)
    reward_extra = serializers.DictField(
        child=serializers.JSONField(),
        read_only=True,
        help_text="The reward's extra info: its dict return's strings, None, lists and dicts "
        "(numbers and booleans are `components`).",
    )
    has_token_data = serializers.SerializerMethodField()
    num_turns = serializers.IntegerField(
        read_only=True, help_text="Turns of a multi-turn episode (0: a single-turn sample)."
    )
    reward_version_number = serializers.IntegerField(
        source="reward_version.number",
        read_only=True,
        allow_null=True,
        help_text="The reward version's number within its function (v2), as people know it.",
    )
    reward_function_name = serializers.CharField(
        source="reward_version.function.name", read_only=True, allow_null=True
    )

    class Meta:
        model = RolloutSample
        fields = [
            "id",
            "run",
            "attempt",
            "step",
            "split",
            "group_id",
            "data_source",
            "prompt",
            "response",
            "ground_truth",
            "score",
            "components",
            "reward_extra",
            "advantage",
            "prompt_length",
            "response_length",
            "finish_reason",
            "error",
            "reward_version",
            "reward_version_number",
            "reward_function_name",
            "superseded",
            "created_at",
            "labels",
            "has_token_data",
            "num_turns",
        ]
        read_only_fields = fields

    def get_has_token_data(self, sample: RolloutSample) -> bool:
        """Whether the detail carries token-level data (logprobs, advantages, entropy)."""
        # The lists annotate it and defer the column itself; reading `token_data` there
        # (even as getattr's default, which Python evaluates first) loads it row by row.
        recorded = getattr(sample, "token_data_recorded", None)
        return bool(recorded) if recorded is not None else sample.token_data is not None


class ToolCallSerializer(serializers.Serializer):
    name = serializers.CharField()
    arguments = serializers.DictField(help_text="The arguments the model wrote (a JSON object).")


class TurnSerializer(serializers.Serializer):
    """One turn of a multi-turn episode after the prompt; keys a turn didn't have are
    null (tool_calls: empty), so every turn has one shape."""

    role = serializers.ChoiceField(choices=TURN_ROLES)
    content = serializers.CharField()
    tool_calls = ToolCallSerializer(many=True, help_text="Tools the assistant called.")
    name = serializers.CharField(allow_null=True, help_text="The tool that answered.")
    error = serializers.CharField(allow_null=True, help_text="The tool failed: what it said.")
    reward = serializers.FloatField(allow_null=True, help_text="This turn's reward.")


def turn_shape(turn: dict[str, Any]) -> dict[str, Any]:
    """A stored turn (records.Turn with only the keys it had) in the API's one shape."""
    return {
        "role": turn["role"],
        "content": turn["content"],
        "tool_calls": turn.get("tool_calls") or [],
        "name": turn.get("name"),
        "error": turn.get("error"),
        "reward": turn.get("reward"),
    }


class RolloutSampleDetailSerializer(RolloutSampleSerializer):
    # Only the detail carries the conversation: a list page of 100 long episodes would
    # weigh megabytes; lists have num_turns to mark episodes.
    turns = serializers.SerializerMethodField(
        help_text="A multi-turn episode's conversation after the prompt, in order (the "
        "response is all of it as the model saw it); null for single-turn samples."
    )

    class Meta(RolloutSampleSerializer.Meta):
        fields = [*RolloutSampleSerializer.Meta.fields, "token_data", "turns"]
        read_only_fields = fields

    @extend_schema_field(TurnSerializer(many=True, allow_null=True))
    def get_turns(self, sample: RolloutSample) -> list[dict[str, Any]] | None:
        return None if sample.turns is None else [turn_shape(t) for t in sample.turns]


class SampleGroupQuerySerializer(serializers.Serializer):
    run = serializers.IntegerField(min_value=1)
    step = serializers.IntegerField(min_value=0, max_value=STEP_MAX)
    group_id = serializers.CharField(max_length=100)


class SampleGroupSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    step = serializers.IntegerField()
    group_id = serializers.CharField()
    count = serializers.IntegerField()
    score_mean = serializers.FloatField(allow_null=True)
    score_std = serializers.FloatField(
        allow_null=True, help_text="Population std; 0 means GRPO learns nothing from the group."
    )
    samples = RolloutSampleSerializer(many=True)


class LabelledExportSerializer(serializers.Serializer):
    new_dataset = serializers.CharField(
        max_length=100,
        required=False,
        help_text="Name of a new dataset (in the run's project) that gets the rows as its v1. "
        "Give this or `dataset`.",
    )
    dataset = serializers.IntegerField(
        min_value=1,
        required=False,
        help_text="Existing dataset (of the run's project) that gets the rows as its next "
        "version, which becomes its latest. Give this or `new_dataset`.",
    )
    label = serializers.RegexField(  # type: ignore[assignment]
        LABEL_PATTERN, required=False, help_text="Only samples with this label (default: any)."
    )
    dry_run = serializers.BooleanField(
        default=False,
        help_text="Store nothing: answer 200 with what the export would store (an "
        "ExportPreview) instead of 201 with the version.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "new_dataset" in attrs and "dataset" in attrs:
            raise serializers.ValidationError(
                {"dataset": ["Give either `dataset` or `new_dataset`, not both."]}
            )
        if "new_dataset" not in attrs and "dataset" not in attrs:
            raise serializers.ValidationError(
                {
                    "new_dataset": [
                        "Name a new dataset (`new_dataset`) or give an existing one's id "
                        "(`dataset`)."
                    ]
                }
            )
        return attrs


class LabelCountSerializer(serializers.Serializer):
    name = serializers.CharField()
    count = serializers.IntegerField()


class ExportExampleSerializer(serializers.Serializer):
    data_source = serializers.CharField()
    prompt = serializers.ListField(
        child=serializers.DictField(child=serializers.CharField()),
        help_text="The row's chat messages, as the dataset holds them (no chat template).",
    )
    ground_truth = serializers.CharField()
    label_names = serializers.CharField(help_text="Its labels, comma separated.")


class ExportPreviewSerializer(serializers.Serializer):
    rows = serializers.IntegerField(help_text="Rows the version would hold (one per prompt).")
    samples = serializers.IntegerField(help_text="Labelled samples the rows come from.")
    labels = LabelCountSerializer(
        many=True,
        help_text="Labelled samples per label, most first (a sample with two labels counts twice).",
    )
    from_text = serializers.IntegerField(
        help_text="Rows whose dataset row is unknown (samples stored before the trainer "
        "reported it): their prompt is the text the sample shows, chat template included."
    )
    examples = ExportExampleSerializer(many=True, help_text="The first rows it would write.")
    new_dataset = serializers.BooleanField(help_text="Whether the export creates the dataset.")
    dataset = serializers.IntegerField(
        allow_null=True, help_text="The existing dataset's id; null: a new one."
    )
    name = serializers.CharField(help_text="The dataset's name.")
    number = serializers.IntegerField(help_text="The version number it would get (1: new).")
    latest_number = serializers.IntegerField(
        allow_null=True, help_text="The existing dataset's latest version, if it has one."
    )
    latest_rows = serializers.IntegerField(
        allow_null=True, help_text="Rows of that latest version."
    )


class ExportedVersionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    dataset = serializers.IntegerField(source="dataset_id")
    number = serializers.IntegerField()
    row_count = serializers.IntegerField()
    size_bytes = serializers.IntegerField()
    checksum = serializers.CharField()
    message = serializers.CharField()
    created_at = serializers.DateTimeField()

"""Serializers of the rollout samples API: samples, groups, labels and exports."""

from __future__ import annotations

import math

from rest_framework import serializers

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
    has_token_data = serializers.SerializerMethodField()

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
            "advantage",
            "prompt_length",
            "response_length",
            "finish_reason",
            "error",
            "reward_version",
            "superseded",
            "created_at",
            "labels",
            "has_token_data",
        ]
        read_only_fields = fields

    def get_has_token_data(self, sample: RolloutSample) -> bool:
        """Whether the detail carries token-level data (logprobs, advantages, entropy)."""
        return bool(getattr(sample, "token_data_recorded", sample.token_data is not None))


class RolloutSampleDetailSerializer(RolloutSampleSerializer):
    class Meta(RolloutSampleSerializer.Meta):
        fields = [*RolloutSampleSerializer.Meta.fields, "token_data"]
        read_only_fields = fields


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
    dataset = serializers.IntegerField(
        min_value=1, help_text="Dataset (of the run's project) that gets the new version."
    )
    label = serializers.RegexField(  # type: ignore[assignment]
        LABEL_PATTERN, required=False, help_text="Only samples with this label (default: any)."
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

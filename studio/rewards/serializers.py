"""Serializers of the reward functions API (requests and responses, typed for the schema)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from studio.datasets.serializers import BinSerializer
from studio.rewards.models import RewardFunction, RewardVersion
from studio.rewards.testrun import MAX_ROWS
from trainer.rewards.builtins import BUILTIN_NAMES

MAX_TIMEOUT_S = 10.0


class RewardVersionSummarySerializer(serializers.ModelSerializer):
    author = serializers.CharField(source="author.username", read_only=True)

    class Meta:
        model = RewardVersion
        fields = [
            "id",
            "function",
            "number",
            "code_hash",
            "entrypoint",
            "message",
            "author",
            "created_at",
        ]
        read_only_fields = fields


class RewardVersionSerializer(RewardVersionSummarySerializer):
    class Meta(RewardVersionSummarySerializer.Meta):
        fields = [*RewardVersionSummarySerializer.Meta.fields, "code"]
        read_only_fields = fields


class RewardFunctionSerializer(serializers.ModelSerializer):
    project = serializers.CharField(source="project.slug", read_only=True)
    created_by = serializers.CharField(source="created_by.username", read_only=True)
    version_count = serializers.IntegerField(read_only=True)
    latest_version = serializers.SerializerMethodField()

    class Meta:
        model = RewardFunction
        fields = [
            "id",
            "project",
            "name",
            "description",
            "created_by",
            "created_at",
            "version_count",
            "latest_version",
        ]
        read_only_fields = fields

    @extend_schema_field(RewardVersionSummarySerializer(allow_null=True))
    def get_latest_version(self, function: RewardFunction) -> dict[str, Any] | None:
        if hasattr(function, "ordered_versions"):  # prefetched, newest first
            version = function.ordered_versions[0] if function.ordered_versions else None
        else:
            version = function.versions.order_by("-number").first()
        return RewardVersionSummarySerializer(version).data if version else None


class RewardVersionCreateSerializer(serializers.Serializer):
    code = serializers.CharField(
        trim_whitespace=False,
        help_text="Python source defining `compute_score(data_source, solution_str, "
        "ground_truth, extra_info, **kw)` (verl's signature); at most 64 KiB.",
    )
    entrypoint = serializers.RegexField(
        r"^[A-Za-z_][A-Za-z0-9_]*$",
        max_length=100,
        default="compute_score",
        help_text="The function to call (its batch form `<name>_batch` is used when defined).",
    )
    message = serializers.CharField(max_length=300, required=False, allow_blank=True, default="")


class RewardFunctionCreateSerializer(serializers.Serializer):
    project = serializers.SlugField(max_length=100, help_text="The project's slug.")
    name = serializers.CharField(max_length=100)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    from_template = serializers.ChoiceField(
        choices=list(BUILTIN_NAMES),
        required=False,
        help_text="Start version 1 from this built-in's source (see /api/reward-templates/).",
    )
    code = serializers.CharField(
        required=False, trim_whitespace=False, help_text="Source of version 1 (or a template)."
    )
    entrypoint = serializers.RegexField(
        r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=100, default="compute_score"
    )
    message = serializers.CharField(max_length=300, required=False, allow_blank=True, default="")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "from_template" in attrs and "code" in attrs:
            raise serializers.ValidationError(
                {"code": ["Give either `code` or `from_template`, not both."]}
            )
        return attrs


class RewardFunctionUpdateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100, required=False)
    description = serializers.CharField(required=False, allow_blank=True)


class RewardTemplateSerializer(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField(help_text="The first line of the template's docstring.")
    code = serializers.CharField()


class RewardDiffSerializer(serializers.Serializer):
    from_version = serializers.IntegerField()
    to_version = serializers.IntegerField()
    from_hash = serializers.CharField()
    to_hash = serializers.CharField()
    diff = serializers.CharField(help_text="Unified diff of the code; empty when identical.")


class CompletionSerializer(serializers.Serializer):
    solution_str = serializers.CharField(
        allow_blank=True, trim_whitespace=False, max_length=65536, help_text="The response."
    )
    ground_truth = serializers.JSONField(help_text="The reference answer, any JSON value.")
    data_source = serializers.CharField(max_length=200, default="default")
    extra_info = serializers.DictField(default=dict)


class RewardTestRequestSerializer(serializers.Serializer):
    completions = CompletionSerializer(
        many=True,
        required=False,
        max_length=MAX_ROWS,  # type: ignore[call-arg]  # (ListSerializer options)
        min_length=1,
        help_text=f"Pasted completions to score (at most {MAX_ROWS}).",
    )
    dataset_version = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text="Id of a dataset version of this project: its rows are scored with their "
        "reference answers as the responses (a function should score them as correct).",
    )
    rows = serializers.IntegerField(
        min_value=1, max_value=MAX_ROWS, default=20, help_text="Dataset rows to score."
    )
    offset = serializers.IntegerField(min_value=0, default=0, help_text="First dataset row.")
    solution_template = serializers.CharField(
        max_length=1000,
        default="{ground_truth}",
        trim_whitespace=False,
        help_text="How a reference answer becomes a response, e.g. `#### {ground_truth}`.",
    )
    timeout_s = serializers.FloatField(
        min_value=0.1, max_value=MAX_TIMEOUT_S, default=2.0, help_text="Per-call time limit."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("completions" in attrs) == ("dataset_version" in attrs):
            raise serializers.ValidationError(
                "Give either `completions` or `dataset_version` (with `rows`), not both."
            )
        if "{ground_truth}" not in attrs["solution_template"]:
            raise serializers.ValidationError(
                {"solution_template": ["It must contain the placeholder {ground_truth}."]}
            )
        return attrs


class RewardTestRowSerializer(serializers.Serializer):
    index = serializers.IntegerField(help_text="Position in `completions`, or the dataset row.")
    data_source = serializers.CharField()
    prompt = serializers.CharField(allow_null=True, help_text="Dataset rows: the prompt text.")
    solution_str = serializers.CharField(allow_blank=True)
    ground_truth = serializers.JSONField()
    score = serializers.FloatField(help_text="0.0 when the call failed.")
    components = serializers.DictField(child=serializers.FloatField())
    error = serializers.CharField(allow_blank=True, help_text="Why the call failed; empty if ok.")
    elapsed_ms = serializers.FloatField()
    output = serializers.CharField(allow_blank=True, help_text="What the function printed.")
    skipped = serializers.BooleanField(help_text="Not run: the time budget ran out first.")


class RewardTestSummarySerializer(serializers.Serializer):
    count = serializers.IntegerField()
    scored = serializers.IntegerField()
    failed = serializers.IntegerField(help_text="Rows whose call failed (see their `error`).")
    skipped = serializers.IntegerField()
    error_rate = serializers.FloatField(help_text="Errors over rows run.")
    mean = serializers.FloatField(allow_null=True)
    std = serializers.FloatField(allow_null=True, help_text="Population standard deviation.")
    min = serializers.FloatField(allow_null=True)
    max = serializers.FloatField(allow_null=True)
    histogram = BinSerializer(many=True, help_text="10 bins over [min(0, low), max(1, high)].")


class RewardTestResultSerializer(serializers.Serializer):
    function = serializers.IntegerField()
    version = serializers.IntegerField()
    dataset_version = serializers.IntegerField(allow_null=True)
    rows = RewardTestRowSerializer(many=True)
    summary = RewardTestSummarySerializer()
    isolation = serializers.DictField(
        child=serializers.BooleanField(), help_text="Sandbox protections active on this host."
    )
    load_error = serializers.CharField(allow_blank=True, help_text="Loading the code failed.")
    elapsed_ms = serializers.FloatField()
    budget_s = serializers.FloatField()

"""Serializers of the reward functions API (requests and responses, typed for the schema)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from studio.projects.serializers import (
    RESOURCE_FIELDS,
    ProjectResourceCreateSerializer,
    ProjectResourceSerializer,
    ProjectResourceUpdateSerializer,
)
from studio.rewards.checks import problems_in
from studio.rewards.models import RewardFunction, RewardVersion
from trainer.rewards import builtin_source
from trainer.rewards.builtins import TEMPLATE_NAMES


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


class RewardFunctionSerializer(ProjectResourceSerializer):
    class Meta:
        model = RewardFunction
        fields = RESOURCE_FIELDS
        read_only_fields = fields

    @extend_schema_field(RewardVersionSummarySerializer(allow_null=True))
    def get_latest_version(self, function: RewardFunction) -> dict[str, Any] | None:
        version = self.latest_version_of(function)
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

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        checked_code(attrs["code"], attrs["entrypoint"])
        return attrs


def checked_code(code: str, entrypoint: str) -> None:
    """The static checks of POST /api/reward-checks/ (size, syntax with line numbers, the
    function and its verl signature); the editor shows the same problems on their lines."""
    problems = problems_in(code, entrypoint)
    if problems:
        raise serializers.ValidationError({"code": [p.message for p in problems]})


class RewardFunctionCreateSerializer(ProjectResourceCreateSerializer):
    noun = "reward function"
    model = RewardFunction
    from_template = serializers.ChoiceField(
        choices=list(TEMPLATE_NAMES),
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
        attrs = super().validate(attrs)
        if "from_template" in attrs:
            attrs["code"] = builtin_source(attrs["from_template"])
            attrs["message"] = (
                attrs["message"] or f"From the built-in template {attrs['from_template']!r}."
            )
        if "code" in attrs:
            checked_code(attrs["code"], attrs["entrypoint"])
        return attrs


class RewardFunctionUpdateSerializer(ProjectResourceUpdateSerializer):
    noun = "reward function"


class RewardTemplateSerializer(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField(
        help_text="The first paragraph of the template's docstring, as plain text."
    )
    code = serializers.CharField()


class RewardDiffSerializer(serializers.Serializer):
    from_version = serializers.IntegerField()
    to_version = serializers.IntegerField()
    from_hash = serializers.CharField()
    to_hash = serializers.CharField()
    diff = serializers.CharField(help_text="Unified diff of the code; empty when identical.")

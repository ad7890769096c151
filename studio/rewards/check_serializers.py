"""Serializers of the static check of reward code (studio.api.rewards.checks)."""

from __future__ import annotations

from rest_framework import serializers


class RewardCheckRequestSerializer(serializers.Serializer):
    code = serializers.CharField(
        trim_whitespace=False,
        allow_blank=True,
        max_length=256 * 1024,  # the trainer's 64 KiB limit is reported as a problem
        help_text="Python source to check; nothing runs.",
    )
    entrypoint = serializers.RegexField(
        r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=100, default="compute_score"
    )


class ProblemSerializer(serializers.Serializer):
    line = serializers.IntegerField(help_text="1-based line of the problem.")
    column = serializers.IntegerField(help_text="1-based column where it starts.")
    end_line = serializers.IntegerField()
    end_column = serializers.IntegerField(help_text="1-based column just past its end.")
    message = serializers.CharField()
    severity = serializers.ChoiceField(choices=["error", "warning"])


class RewardCheckSerializer(serializers.Serializer):
    ok = serializers.BooleanField(help_text="True when the code can be saved as a version.")
    problems = ProblemSerializer(many=True)

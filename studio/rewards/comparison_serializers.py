"""Serializers of the A/B comparison of two reward versions (studio.api.rewards.comparisons)."""

from __future__ import annotations

from rest_framework import serializers


class ComparisonStartSerializer(serializers.Serializer):
    base_test_run = serializers.IntegerField(
        min_value=1, help_text="A succeeded test-run whose rows (responses) are scored again."
    )
    reward_version = serializers.IntegerField(
        min_value=1, help_text="Id of the reward version to score them with (same project)."
    )


class ComparisonQuerySerializer(serializers.Serializer):
    a = serializers.IntegerField(min_value=1, help_text="The base test-run.")
    b = serializers.IntegerField(min_value=1, help_text="The test-run that scored its rows again.")


class ComparedRowSerializer(serializers.Serializer):
    position = serializers.IntegerField(help_text="Row position in both test-runs.")
    index = serializers.IntegerField(help_text="The base row's index (dataset row or paste).")
    sample = serializers.IntegerField(allow_null=True)
    prompt = serializers.CharField(allow_null=True)
    solution_str = serializers.CharField(allow_blank=True)
    ground_truth = serializers.JSONField()
    same_input = serializers.BooleanField(help_text="Both scored the same response.")
    score_a = serializers.FloatField()
    score_b = serializers.FloatField()
    error_a = serializers.CharField(allow_blank=True)
    error_b = serializers.CharField(allow_blank=True)
    delta = serializers.FloatField(
        allow_null=True, help_text="score_b - score_a; null if one failed."
    )
    differs = serializers.BooleanField(help_text="Different scores, or only one failed.")
    skipped = serializers.BooleanField(help_text="One of them ran out of time before it.")


class ComparisonSerializer(serializers.Serializer):
    a = serializers.IntegerField()
    b = serializers.IntegerField()
    rows = ComparedRowSerializer(many=True, help_text="Rows that differ first, largest first.")
    compared = serializers.IntegerField()
    differing = serializers.IntegerField()
    same_inputs = serializers.BooleanField(help_text="Every row scored the same response.")

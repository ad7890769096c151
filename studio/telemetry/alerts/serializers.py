"""Serializers of a run's alerts and what raised them (studio/api/runs/details.py)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from studio.telemetry.alerts.evidence import Evidence, evidence_of
from studio.telemetry.models import RunAlert


class EvidenceSerializer(serializers.Serializer):
    step_min = serializers.IntegerField(help_text="First step of the window that raised it.")
    step_max = serializers.IntegerField(help_text="The step it was raised at.")
    metric_keys = serializers.ListField(
        child=serializers.CharField(), help_text="The metric series that raised it."
    )
    component = serializers.CharField(
        allow_null=True, help_text="The reward component, for reward_component_dominance."
    )


class RunAlertSerializer(serializers.ModelSerializer):
    evidence = serializers.SerializerMethodField(
        help_text="What raised it: filter samples by step_min/step_max, chart metric_keys."
    )

    class Meta:
        model = RunAlert
        fields = [
            "id",
            "attempt",
            "seq",
            "step",
            "kind",
            "severity",
            "message",
            "values",
            "evidence",
            "created_at",
        ]
        read_only_fields = fields

    @extend_schema_field(EvidenceSerializer)
    def get_evidence(self, alert: RunAlert) -> Evidence:
        return evidence_of(alert.kind, alert.step, alert.values)

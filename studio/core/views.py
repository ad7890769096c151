from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from studio.core.health import PROBES


class ComponentHealthSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=["ok", "error", "disabled"])
    latency_ms = serializers.FloatField()
    detail = serializers.CharField()


class HealthSerializer(serializers.Serializer):
    status = serializers.ChoiceField(
        choices=["ok", "degraded"],
        help_text="ok when every configured component answers; degraded otherwise (HTTP 503).",
    )
    version = serializers.CharField()
    components = serializers.DictField(child=ComponentHealthSerializer())


class HealthView(APIView):
    """Liveness and readiness of the studio and the services it depends on."""

    permission_classes = [AllowAny]
    authentication_classes: list[type] = []

    @extend_schema(responses={200: HealthSerializer, 503: HealthSerializer})
    def get(self, request: Request) -> Response:
        components = {name: probe() for name, probe in PROBES.items()}
        healthy = all(c.status != "error" for c in components.values())
        body = {
            "status": "ok" if healthy else "degraded",
            "version": "0.1.0",
            "components": {
                name: {"status": c.status, "latency_ms": c.latency_ms, "detail": c.detail}
                for name, c in components.items()
            },
        }
        return Response(body, status=200 if healthy else 503)

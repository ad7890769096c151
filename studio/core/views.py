from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect, JsonResponse
from django.urls import Resolver404, ResolverMatch, resolve
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


def api_not_found(request: HttpRequest) -> HttpResponse:
    """Any other /api/ path: a 404 in the API's error format, never the app's HTML page.
    A path that exists with a trailing slash is redirected there, as Django's
    APPEND_SLASH would (a GET or HEAD only: a redirected POST loses its body)."""
    slashed = f"{request.path}/"
    if not request.path.endswith("/") and request.method in ("GET", "HEAD"):
        match = resolve_or_none(slashed)
        if match is not None and match.func is not api_not_found:
            query = request.META.get("QUERY_STRING", "")
            return HttpResponsePermanentRedirect(slashed + (f"?{query}" if query else ""))
    return JsonResponse(
        {
            "error": {
                "code": "not_found",
                "message": f"No API endpoint at {request.path[:200]}; see /api/docs/.",
            }
        },
        status=404,
    )


def resolve_or_none(path: str) -> ResolverMatch | None:
    try:
        return resolve(path)
    except Resolver404:
        return None

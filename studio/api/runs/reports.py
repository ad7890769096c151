"""The shareable HTML report of one run or several (studio/reports/), as a download."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import renderers, serializers
from rest_framework.request import Request

from studio.api.common.scoping import ProjectScopedViewSet
from studio.api.runs.metrics import CommaSeparatedField, readable_runs
from studio.reports.data import report_filename, report_html
from studio.runs.models import Run

MAX_REPORT_RUNS = 8  # what the compare page overlays


class HtmlRenderer(renderers.BaseRenderer):
    """Declares text/html so a browser's `Accept` is honoured; the report is built by the
    view, so only error bodies get here, as JSON."""

    media_type = "text/html"
    format = "html"
    charset = "utf-8"

    def render(self, data: Any, accepted_media_type: Any = None, context: Any = None) -> Any:
        return renderers.JSONRenderer().render(data)


class ReportQuerySerializer(serializers.Serializer):
    ids = CommaSeparatedField(
        max_items=MAX_REPORT_RUNS,
        item=serializers.IntegerField(min_value=1, max_value=2**63 - 1),
        help_text=f"Comma-separated run ids, at most {MAX_REPORT_RUNS}; each must be readable.",
    )


def _attachment(runs: list[Run]) -> HttpResponse:
    response = HttpResponse(report_html(runs), content_type="text/html; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{report_filename(runs)}"'
    return response


REPORT = OpenApiResponse(
    OpenApiTypes.STR,
    description="One self-contained HTML file (plotly.js embedded: opens offline).",
)


class RunReportViewSet(ProjectScopedViewSet):
    """Reports of runs (routed explicitly under /api/runs/)."""

    queryset = Run.objects.select_related("project")
    serializer_class = ReportQuerySerializer  # what OPTIONS describes

    @extend_schema(
        operation_id="runs_report",
        parameters=[OpenApiParameter("format", exclude=True)],
        responses={
            (200, "text/html"): REPORT,
            404: OpenApiResponse(description="No such run in your projects."),
        },
    )
    def run_report(self, request: Request, pk: int) -> HttpResponse:
        """The run's report: summary, metric charts, config, alerts, and its highest- and
        lowest-reward samples, as an HTML attachment."""
        return _attachment(readable_runs(request, [int(pk)]))

    @extend_schema(
        operation_id="runs_report_compare",
        parameters=[ReportQuerySerializer, OpenApiParameter("format", exclude=True)],
        responses={
            (200, "text/html"): REPORT,
            400: OpenApiResponse(description="`ids` is missing or invalid."),
            404: OpenApiResponse(description="A run is not in your projects."),
        },
    )
    def compare_report(self, request: Request) -> HttpResponse:
        """One report of several runs: overlaid charts and the config keys that differ."""
        query = ReportQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        return _attachment(readable_runs(request, query.validated_data["ids"]))

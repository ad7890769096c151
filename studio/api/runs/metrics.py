"""Metric series of runs: available keys, downsampled queries, CSV export."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, renderers, serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from studio.api.common.scoping import ProjectScopedViewSet
from studio.runs.models import Run
from studio.telemetry.series import STEP_MAX, StepRange, downsample, metric_keys, metric_rows
from studio.telemetry.series.step_times import interpolate, time_anchors

MAX_RUNS = 20
MAX_KEYS = 100
MIN_POINTS, MAX_POINTS, DEFAULT_POINTS = 10, 5000, 1000


def readable_runs(request: Request, run_ids: Iterable[int]) -> list[Run]:
    """The runs, in the order asked, if the user may read every one; else 404 naming
    the first that is missing (a run in someone else's project looks the same as a
    run that does not exist, so nothing leaks)."""
    wanted = list(run_ids)
    found = {
        run.pk: run
        for run in Run.objects.filter(
            pk__in=wanted, project__memberships__user=request.user.pk
        ).select_related("project")
    }
    for run_id in wanted:
        if run_id not in found:
            raise exceptions.NotFound(f"No run {run_id} in your projects.")
    return [found[run_id] for run_id in wanted]


class CommaSeparatedField(serializers.CharField):
    """`a,b,c` in a query string -> a de-duplicated list, order kept."""

    def __init__(self, *, max_items: int, item: serializers.Field, **kwargs: Any) -> None:
        self.max_items = max_items
        self.item = item
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> list[Any]:  # type: ignore[override]
        text = super().to_internal_value(data)
        parts = [part.strip() for part in text.split(",") if part.strip()]
        if not parts:
            raise serializers.ValidationError("Give at least one value, comma-separated.")
        if len(parts) > self.max_items:
            raise serializers.ValidationError(
                f"{len(parts)} values given; at most {self.max_items} are allowed."
            )
        items: dict[Any, None] = {}
        for part in parts:
            try:
                items[self.item.run_validation(part)] = None
            except serializers.ValidationError as exc:
                reason = exc.detail[0] if isinstance(exc.detail, list) else exc.detail
                raise serializers.ValidationError(f"{part!r:.60}: {reason}") from None
        return list(items)


class StepRangeSerializer(serializers.Serializer):
    step_min = serializers.IntegerField(
        min_value=0, max_value=STEP_MAX, required=False, help_text="First step (inclusive)."
    )
    step_max = serializers.IntegerField(
        min_value=0, max_value=STEP_MAX, required=False, help_text="Last step (inclusive)."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        first, last = attrs.get("step_min", 0), attrs.get("step_max", STEP_MAX)
        if first > last:
            raise serializers.ValidationError(
                {"step_min": [f"step_min ({first}) is larger than step_max ({last})."]}
            )
        attrs["steps"] = StepRange(first, last)
        return attrs


def key_field(**kwargs: Any) -> CommaSeparatedField:
    return CommaSeparatedField(
        max_items=MAX_KEYS,
        item=serializers.CharField(max_length=200),
        help_text=f"Comma-separated metric keys, at most {MAX_KEYS}.",
        **kwargs,
    )


class MetricsQuerySerializer(StepRangeSerializer):
    runs = CommaSeparatedField(
        max_items=MAX_RUNS,
        item=serializers.IntegerField(min_value=1),
        help_text=f"Comma-separated run ids, at most {MAX_RUNS}; every one must be readable.",
    )
    keys = key_field()
    points = serializers.IntegerField(
        min_value=MIN_POINTS,
        max_value=MAX_POINTS,
        default=DEFAULT_POINTS,
        help_text="Most points returned per series.",
    )
    times = serializers.BooleanField(
        default=False,
        help_text="Also return each point's wall-clock time (`times`), for a time axis.",
    )


class MetricsCsvQuerySerializer(StepRangeSerializer):
    keys = key_field(required=False)


class MetricSeriesSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    key = serializers.CharField()
    total = serializers.IntegerField(help_text="Points in the step range before downsampling.")
    downsampled = serializers.BooleanField()
    bucket_origin = serializers.IntegerField(
        help_text="The step the downsampling buckets start at (see bucket_width)."
    )
    bucket_width = serializers.IntegerField(
        help_text="Steps per bucket: bucket i covers [bucket_origin + i * bucket_width, "
        "bucket_origin + (i + 1) * bucket_width) and gave its lowest and highest point. "
        "1 (or a series that is not downsampled): every point is its own bucket."
    )
    steps = serializers.ListField(child=serializers.IntegerField())
    values = serializers.ListField(
        child=serializers.FloatField(allow_null=True), help_text="null for NaN or infinity."
    )
    times = serializers.ListField(
        child=serializers.FloatField(allow_null=True),
        required=False,
        help_text="With times=true: unix seconds when each step was emitted, interpolated "
        "between at most 2000 anchor steps of the run (null: unknown).",
    )


class MetricsQueryResultSerializer(serializers.Serializer):
    points = serializers.IntegerField(help_text="The per-series limit that was applied.")
    series = MetricSeriesSerializer(many=True)


class MetricKeysSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    keys = serializers.ListField(child=serializers.CharField())


class MetricsQueryView(APIView):
    """Series of one or more runs, downsampled on the server."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="metrics_query",
        parameters=[MetricsQuerySerializer],
        responses={
            200: MetricsQueryResultSerializer,
            400: OpenApiResponse(description="A parameter is missing or out of bounds."),
            404: OpenApiResponse(description="A run is not in your projects."),
        },
    )
    def get(self, request: Request) -> Response:
        """Each (run, key) series in the step range, with at most `points` points: the
        lowest and highest point of each of up to `points/2 - 1` equal step buckets
        (widths rounded up to whole pre-aggregated tiles, so at least 2/3 of that many),
        plus the series' first and last points, so spikes are never averaged away. A
        series spanning at most `points - 2` steps comes back whole. Superseded points
        are excluded; (run, key) pairs without points are left out."""
        query = MetricsQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        v = query.validated_data
        runs = readable_runs(request, v["runs"])
        series = downsample([run.pk for run in runs], v["keys"], v["points"], v["steps"])
        # Built by hand: a serializer per point is too slow for 40 keys x 1000 points.
        rows = [
            {
                "run": s.run_id,
                "key": s.key,
                "total": s.total,
                "downsampled": s.downsampled,
                "bucket_origin": s.bucket_origin,
                "bucket_width": s.bucket_width,
                "steps": s.steps,
                "values": s.values,
            }
            for s in series
        ]
        if v["times"]:
            anchors = {run.pk: time_anchors(run.pk) for run in runs}
            for row, s in zip(rows, series, strict=True):
                row["times"] = interpolate(anchors[s.run_id], s.steps)
        return Response({"points": v["points"], "series": rows})


class CsvRenderer(renderers.BaseRenderer):
    """Declares text/csv so `Accept: text/csv` is honoured; rows are streamed by the view."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data: Any, accepted_media_type: Any = None, context: Any = None) -> Any:
        return renderers.JSONRenderer().render(data)  # only error bodies get here


class _Echo:
    def write(self, value: str) -> str:
        return value


def csv_lines(rows: Iterable[tuple[int, str, float]]) -> Iterator[str]:
    writer = csv.writer(_Echo(), lineterminator="\n")
    yield writer.writerow(["step", "key", "value"])
    for row in rows:
        yield writer.writerow(row)


class RunMetricsViewSet(ProjectScopedViewSet):
    """Metric reads of one run (routed explicitly under /api/runs/{id}/)."""

    queryset = Run.objects.select_related("project")
    serializer_class = MetricKeysSerializer  # for OPTIONS; each action declares its own

    @extend_schema(
        operation_id="runs_metrics_keys",
        responses={200: MetricKeysSerializer, 404: OpenApiResponse(description="No such run.")},
    )
    def metric_keys(self, request: Request, pk: int) -> Response:
        """The run's metric keys (of live points), sorted."""
        run = self.get_object()
        return Response({"run": run.pk, "keys": metric_keys(run.pk)})

    @extend_schema(
        operation_id="runs_metrics_csv",
        # DRF's ?format= override changes nothing here: the body is always CSV.
        parameters=[MetricsCsvQuerySerializer, OpenApiParameter("format", exclude=True)],
        responses={
            (200, "text/csv"): OpenApiResponse(
                OpenApiTypes.STR, description="Columns step,key,value; by key, then step."
            ),
            400: OpenApiResponse(description="A parameter is out of bounds."),
            404: OpenApiResponse(description="No such run."),
        },
    )
    def metrics_csv(self, request: Request, pk: int) -> StreamingHttpResponse:
        """Every live point of the run (optionally only some keys and a step range) as
        CSV, streamed."""
        run = self.get_object()
        query = MetricsCsvQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        v = query.validated_data
        rows = metric_rows(run.pk, v.get("keys"), v["steps"])
        response = StreamingHttpResponse(csv_lines(rows), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-metrics.csv"'
        return response

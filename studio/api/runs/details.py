"""A run's alerts, log lines and checkpoints (routed under /api/runs/{id}/).

Each list is scoped like every run sub-resource: the run must be in one of the caller's
projects (else 404, whether it exists or not), and only that run's rows are read.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.db.models import Q, QuerySet
from django.db.models.functions import Upper
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, mixins, renderers, status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from studio.api.common.scoping import ProjectScopedViewSet
from studio.api.runs.metrics import readable_runs
from studio.runs.checkpoints import locate_checkpoint, tar_stream
from studio.runs.models import Checkpoint, Run
from studio.telemetry.alerts.serializers import RunAlertSerializer
from studio.telemetry.models import LogLine, RunAlert
from studio.telemetry.serializers import (
    CheckpointSerializer,
    LogLineSerializer,
    LogQuerySerializer,
    levels_from,
)

NO_RUN = OpenApiResponse(description="The run is not in your projects.")


class _RunChildViewSet(mixins.ListModelMixin, ProjectScopedViewSet):
    """Rows of one readable run; the run comes from the URL."""

    project_path = "run__project"

    def run(self) -> Run:
        if not hasattr(self, "_run"):
            (self._run,) = readable_runs(self.request, [int(self.kwargs["pk"])])
        return self._run

    def get_queryset(self) -> QuerySet[Any]:
        # The run was checked readable, so the rows need no membership join (nor the
        # DISTINCT it brings): GenericViewSet's plain queryset, filtered by the run.
        return viewsets.GenericViewSet.get_queryset(self).filter(run_id=self.run().pk)


class RunAlertsViewSet(_RunChildViewSet):
    """Reward-hacking and collapse alerts of a run (studio.telemetry.alerts.rules)."""

    queryset = RunAlert.objects.all()
    serializer_class = RunAlertSerializer

    def get_queryset(self) -> QuerySet[RunAlert]:
        return super().get_queryset().order_by("-created_at", "-step", "-id")

    @extend_schema(
        operation_id="runs_alerts_list", responses={200: RunAlertSerializer(many=True), 404: NO_RUN}
    )
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """The run's alerts, newest first. `evidence` names the steps (as the samples
        list's step_min/step_max) and the metric keys that raised each one."""
        return super().list(request, *args, **kwargs)


class RunLogsViewSet(_RunChildViewSet):
    """Log lines a run's trainer reported."""

    queryset = LogLine.objects.all()
    serializer_class = LogLineSerializer

    def get_queryset(self) -> QuerySet[LogLine]:
        query = LogQuerySerializer(data=self.request.query_params)
        query.is_valid(raise_exception=True)
        v = query.validated_data
        lines = super().get_queryset()
        if "level" in v:
            lines = lines.alias(upper_level=Upper("level")).filter(
                upper_level__in=levels_from(v["level"])
            )
        if "attempt" in v:
            lines = lines.filter(attempt=v["attempt"])
        if "after_seq" in v:
            after = v["after_attempt"]
            lines = lines.filter(Q(attempt__gt=after) | Q(attempt=after, seq__gt=v["after_seq"]))
        return lines.order_by("attempt", "seq")

    @extend_schema(
        operation_id="runs_logs_list",
        parameters=[LogQuerySerializer],
        responses={
            200: LogLineSerializer(many=True),
            400: OpenApiResponse(description="A filter is invalid."),
            404: NO_RUN,
        },
    )
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """The run's log lines in the order the trainer emitted them (attempt, then seq).
        `level` keeps that level and above; `after_attempt` + `after_seq` continue
        after a line already seen (the `log` events of /api/runs/{id}/events carry
        the same attempt and seq)."""
        return super().list(request, *args, **kwargs)


class TarRenderer(renderers.BaseRenderer):
    """Declares application/x-tar so `Accept: application/x-tar` is honoured; the
    archive is streamed by the view."""

    media_type = "application/x-tar"
    format = "tar"
    charset = None
    render_style = "binary"

    def render(self, data: Any, accepted_media_type: Any = None, context: Any = None) -> Any:
        return renderers.JSONRenderer().render(data)  # only error bodies get here


def served_chunks(
    request: Request, chunks: Iterator[bytes]
) -> Iterator[bytes] | AsyncIterator[bytes]:
    """The chunks as the server needs them: Django's ASGI handler turns a plain iterator
    into a list first (the whole body in memory), so under ASGI each chunk is read in a
    worker thread and handed over one by one."""
    if not isinstance(request._request, ASGIRequest):
        return chunks

    def next_chunk() -> bytes | None:
        return next(chunks, None)

    read = sync_to_async(next_chunk, thread_sensitive=False)

    async def one_by_one() -> AsyncIterator[bytes]:
        while (chunk := await read()) is not None:
            yield chunk

    return one_by_one()


class Unreachable(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_code = "checkpoint_unreachable"
    default_detail = "The studio can't reach this checkpoint."


class RunCheckpointsViewSet(_RunChildViewSet):
    """Checkpoints a run's trainer registered, and their download where reachable."""

    queryset = Checkpoint.objects.all()
    serializer_class = CheckpointSerializer

    def get_queryset(self) -> QuerySet[Checkpoint]:
        return super().get_queryset().order_by("step", "attempt", "id")

    @extend_schema(
        operation_id="runs_checkpoints_list",
        responses={200: CheckpointSerializer(many=True), 404: NO_RUN},
    )
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """The run's checkpoints by step, each saying whether this studio can serve it
        (and if not, why and which setting would fix it)."""
        return super().list(request, *args, **kwargs)

    @extend_schema(
        operation_id="runs_checkpoints_download",
        parameters=[OpenApiParameter("format", exclude=True)],
        responses={
            (200, "application/x-tar"): OpenApiResponse(
                OpenApiTypes.BINARY, description="The checkpoint folder as an uncompressed tar."
            ),
            404: OpenApiResponse(description="No such checkpoint of a run in your projects."),
            409: OpenApiResponse(
                description="The studio can't reach the checkpoint; the message says why."
            ),
        },
    )
    def download(self, request: Request, pk: int, checkpoint_id: int) -> StreamingHttpResponse:
        """The checkpoint folder as a tar stream (`run-<id>-step-<step>.tar`)."""
        checkpoint = self.get_queryset().filter(pk=checkpoint_id).first()
        if checkpoint is None:
            raise exceptions.NotFound(f"Run {pk} has no checkpoint {checkpoint_id}.")
        location = locate_checkpoint(checkpoint)
        if not location.reachable or location.path is None:
            raise Unreachable(location.reason)
        name = f"run-{checkpoint.run_id}-step-{checkpoint.step}"
        try:
            archive = tar_stream(location.path, name)
        except OSError as exc:  # the trainer changed the folder since it was located
            raise Unreachable(
                f"Checkpoint {checkpoint.uri} changed while it was listed ({exc}); try again."
            ) from None
        response = StreamingHttpResponse(
            served_chunks(request, archive.chunks), content_type="application/x-tar"
        )
        response["Content-Length"] = str(archive.length)
        response["Content-Disposition"] = f'attachment; filename="{name}.tar"'
        return response

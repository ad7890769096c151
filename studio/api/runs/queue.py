"""A project's place in the run queue: its running jobs against its cap, and every
queued run's position and what it waits for (studio.runs.queue, studio.runs.fair_share)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions, serializers
from rest_framework.request import Request
from rest_framework.response import Response

from studio.api.common.scoping import ProjectScopedViewSet
from studio.projects.models import Role
from studio.runs.fair_share import QueueEntry
from studio.runs.models import Run, RunStatus
from studio.runs.queue import queue_limits, queue_view, running_jobs
from studio.telemetry.live.stream_slots import max_streams_per_user

_LAST = QueueEntry(0, 1 << 30, "waits", "")  # sorts a run the view has not placed yet last


class QueuedRunSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    position = serializers.IntegerField(help_text="Place in the whole cluster's queue (1 next).")
    waiting_for = serializers.CharField(help_text='e.g. "2 CPUs (1.0 free)"; empty if starting.')


class ProjectQueueSerializer(serializers.Serializer):
    project = serializers.CharField()
    running_jobs = serializers.IntegerField(
        help_text="Starting, running or cancelling runs and evaluations, and live playground "
        "model servers."
    )
    max_running_jobs = serializers.IntegerField(
        help_text="The most jobs the project may hold at once (0: no cap)."
    )
    queued = QueuedRunSerializer(many=True, help_text="Queued runs, next to start first.")
    max_streams_per_user = serializers.IntegerField(
        help_text="Live streams (SSE) one user may hold open at once."
    )


class ProjectQueueView(ProjectScopedViewSet):
    """The project's share of the run queue. Viewers and up."""

    queryset = Run.objects.none()  # for the schema; the view reads what it shows itself
    pagination_class = None  # one object, not a page (so the route's method isn't `list`)

    @extend_schema(
        parameters=[OpenApiParameter("project", str, required=True, description="Its slug.")],
        responses=ProjectQueueSerializer,
    )
    def summary(self, request: Request) -> Response:
        slug = request.query_params.get("project")
        if not slug:
            raise exceptions.ValidationError({"project": ["Name the project (its slug)."]})
        project = self.project_for(slug, Role.VIEWER)
        queued = list(
            Run.objects.filter(project=project, status=RunStatus.QUEUED).values_list("id", "name")
        )
        places = queue_view() if queued else {}
        entries = [
            {
                "id": run_id,
                "name": name,
                "position": places[run_id].position,
                "waiting_for": places[run_id].waiting_for,
            }
            for run_id, name in sorted(queued, key=lambda item: places.get(item[0], _LAST).position)
            if run_id in places
        ]
        body = {
            "project": project.slug,
            "running_jobs": running_jobs().by_project.get(project.pk, 0),
            "max_running_jobs": queue_limits().per_project,
            "queued": entries,
            "max_streams_per_user": max_streams_per_user(),
        }
        return Response(ProjectQueueSerializer(body).data)

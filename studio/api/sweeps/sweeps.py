"""Sweeps: searches over a run's config and inputs whose trials are runs (docs/sweeps.md).
Viewers read; members create, pause, resume, stop and add trials."""

from __future__ import annotations

from typing import Any

from django.db.models import Prefetch, QuerySet
from django.http import HttpResponse
from django_filters import rest_framework as filters
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, mixins, status
from rest_framework.decorators import action
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from studio.api.common.permissions import signed_in_user
from studio.api.common.scoping import ProjectScopedViewSet
from studio.api.runs.reports import REPORT, HtmlRenderer
from studio.reports.data import sweep_report_filename, sweep_report_html
from studio.runs.models import Run
from studio.sweeps import service
from studio.sweeps.models import Sweep, SweepStatus, SweepTrial
from studio.sweeps.serializers import (
    AddTrialsSerializer,
    DeletedSweepSerializer,
    SweepCreateSerializer,
    SweepDetailSerializer,
    SweepSerializer,
)
from studio.sweeps.study import PrunerSpec

CONFLICT = OpenApiResponse(description="The sweep's status does not allow this action.")


class SweepFilter(filters.FilterSet):
    project = filters.CharFilter(field_name="project__slug", help_text="A project's slug.")
    status = filters.MultipleChoiceFilter(choices=SweepStatus.choices, help_text="Repeatable.")

    class Meta:
        model = Sweep
        fields = ["project", "status"]


class SweepViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ProjectScopedViewSet):
    queryset = (
        Sweep.objects.select_related("project", "created_by", "base_run")
        .prefetch_related(
            Prefetch("trials", queryset=SweepTrial.objects.select_related("run", "sweep"))
        )
        .order_by("-created_at", "-id")
    )
    serializer_class = SweepSerializer
    filterset_class = SweepFilter
    http_method_names = ["get", "post", "delete", "head", "options"]

    def get_serializer_class(self) -> Any:
        return SweepSerializer if self.action == "list" else SweepDetailSerializer

    def get_queryset(self) -> QuerySet[Any]:
        queryset = super().get_queryset()
        if self.action == "list":  # the list needs states and values, not runs' configs
            trials = SweepTrial.objects.only("sweep_id", "number", "state", "value", "run_id")
            queryset = queryset.prefetch_related(None).prefetch_related(
                Prefetch("trials", queryset=trials)
            )
        return queryset

    def _detail(self, sweep_id: int, code: int = status.HTTP_200_OK) -> Response:
        sweep = self.get_queryset().get(pk=sweep_id)
        return Response(SweepDetailSerializer(sweep).data, status=code)

    @extend_schema(request=SweepCreateSerializer, responses={201: SweepDetailSerializer})
    def create(self, request: Request) -> Response:
        """Start a sweep: its first trials are queued at once. Errors are keyed by request
        field (`space`, `metric_reward`, `parallelism`, `base`, ...)."""
        data = SweepCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = dict(data.validated_data)
        project = self.project_for(v.pop("project"))
        base_id = v.pop("base_run", None)
        base = None
        if base_id is not None:
            base = Run.objects.filter(pk=base_id, project=project).first()
            if base is None:
                raise exceptions.ValidationError({"base_run": ["Not a run of this project."]})
        pruner = v.pop("pruner", None) or PrunerSpec().as_dict()
        sweep = service.create_sweep(
            project,
            service.CreateSweep(**v, pruner=pruner, base_run=base),
            signed_in_user(request),
        )
        return self._detail(sweep.pk, status.HTTP_201_CREATED)

    def _act(self, verb: str) -> Response:
        sweep = self.get_object()
        self.require_role(sweep.project)
        getattr(service, f"{verb}_sweep")(sweep, signed_in_user(self.request))
        return self._detail(sweep.pk)

    @extend_schema(request=None, responses={200: DeletedSweepSerializer, 409: CONFLICT})
    def destroy(self, request: Request, pk: str | None = None) -> Response:
        """Delete a sweep whose trials have all ended, with every trial's run and its
        files; answers the bytes freed. A 409 while a trial runs, or when something else
        uses one of its runs (the message names it)."""
        sweep = self.get_object()
        self.require_role(sweep.project)
        freed = service.delete_sweep(sweep, signed_in_user(request))
        return Response({"id": sweep.pk, "name": sweep.name, "freed_bytes": freed})

    @extend_schema(request=None, responses={200: SweepDetailSerializer, 409: CONFLICT})
    @action(detail=True, methods=["post"])
    def pause(self, request: Request, pk: str | None = None) -> Response:
        """Ask for no more trials; the running ones go on."""
        return self._act("pause")

    @extend_schema(request=None, responses={200: SweepDetailSerializer, 409: CONFLICT})
    @action(detail=True, methods=["post"])
    def resume(self, request: Request, pk: str | None = None) -> Response:
        """Ask for trials again."""
        return self._act("resume")

    @extend_schema(request=None, responses={200: SweepDetailSerializer, 409: CONFLICT})
    @action(detail=True, methods=["post"])
    def stop(self, request: Request, pk: str | None = None) -> Response:
        """End the sweep: its running trials are cancelled."""
        return self._act("stop")

    @extend_schema(
        request=AddTrialsSerializer, responses={200: SweepDetailSerializer, 409: CONFLICT}
    )
    @action(detail=True, methods=["post"])
    def trials(self, request: Request, pk: str | None = None) -> Response:
        """Raise the trial budget by `count` (a finished sweep runs again)."""
        sweep = self.get_object()
        self.require_role(sweep.project)
        data = AddTrialsSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        service.add_trials(sweep, data.validated_data["count"], signed_in_user(request))
        return self._detail(sweep.pk)

    @extend_schema(
        operation_id="sweeps_report",
        parameters=[OpenApiParameter("format", exclude=True)],
        responses={
            (200, "text/html"): REPORT,
            404: OpenApiResponse(description="No such sweep in your projects."),
        },
    )
    @action(detail=True, methods=["get"], renderer_classes=[JSONRenderer, HtmlRenderer])
    def report(self, request: Request, pk: str | None = None) -> HttpResponse:
        """The sweep's report: its settings (base, space, method, metric, pruner, budget),
        the best trial with its config diff, the parameters' importance, a
        parallel-coordinates chart, the metric across steps for every trial and the
        trials table, as one HTML attachment that opens offline."""
        sweep = self.get_object()
        response = HttpResponse(sweep_report_html(sweep), content_type="text/html; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{sweep_report_filename(sweep)}"'
        return response

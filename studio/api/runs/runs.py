"""Runs: create from a preset and/or config, clone, cancel, resume, reprioritise,
archive and delete; plus the config schema, presets and a validator for the browser's
run form."""

from __future__ import annotations

from functools import cache
from typing import Any

import django_filters.rest_framework as filters
from django.db.models import Exists, OuterRef, QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from studio.api.common.permissions import signed_in_user
from studio.api.common.scoping import ProjectScopedViewSet
from studio.references.summary import SUMMARY_RELATED
from studio.runs import deletion, service
from studio.runs.configs import InvalidConfig, resolve
from studio.runs.models import Checkpoint, Run, RunKind, RunStatus
from studio.runs.requests import CloneRun, CreateRun, RunChanges
from studio.runs.serializers import (
    ConfigRequestSerializer,
    ConfigValidationSerializer,
    DeletedRunSerializer,
    PresetSerializer,
    PrioritySerializer,
    ReasonSerializer,
    RunCloneSerializer,
    RunCreateSerializer,
    RunDetailSerializer,
    RunSerializer,
    RunUpdateSerializer,
)
from trainer.config import PRESETS, RunConfig, preset_names

CONFLICT = OpenApiResponse(description="The run's status does not allow this action.")
HELD = OpenApiResponse(
    description="The run is live (cancel it first), or something that must outlive it "
    "uses it (a model registered from its checkpoint, an evaluation of them): the message "
    "names it."
)


def reason_of(request: Request) -> str:
    """The reason a cancel or resume request gives (ReasonSerializer; empty if none): the
    runs' and the evaluations' views read it the same way."""
    data = ReasonSerializer(data=request.data)
    data.is_valid(raise_exception=True)
    return str(data.validated_data.get("reason", ""))


class ProjectRunsFilter(filters.FilterSet):
    """Runs of any kind by project and status (evaluations filter on these alone)."""

    project = filters.CharFilter(field_name="project__slug", help_text="A project's slug.")
    status = filters.MultipleChoiceFilter(choices=RunStatus.choices, help_text="Repeatable.")

    class Meta:
        model = Run
        fields = ["project", "status"]


class RunFilter(ProjectRunsFilter):
    tag = filters.CharFilter(method="filter_tag", help_text="Runs carrying this tag.")
    search = filters.CharFilter(
        field_name="name", lookup_expr="icontains", help_text="Part of the run's name."
    )
    kind = filters.ChoiceFilter(
        choices=RunKind.choices,
        method="filter_kind",
        help_text="train (the default) or evaluation (also listed at /api/evaluations/).",
    )
    archived = filters.ChoiceFilter(
        choices=[("false", "false"), ("true", "true"), ("all", "all")],
        method="filter_archived",
        help_text="false (the default): runs not archived; true: only archived runs; all.",
    )
    has_checkpoint = filters.BooleanFilter(
        method="filter_has_checkpoint",
        help_text="true: only runs that saved a checkpoint (what a model can be made from).",
    )
    ordering = filters.OrderingFilter(
        fields=["created_at", "priority", "name", "status", "started_at", "finished_at"]
    )

    class Meta:
        model = Run
        fields = ["project", "status", "tag", "search"]

    def filter_has_checkpoint(
        self, queryset: QuerySet[Run], name: str, value: bool | None
    ) -> QuerySet[Run]:
        if value is None:
            return queryset
        saved = Exists(Checkpoint.objects.filter(run=OuterRef("pk")))
        return queryset.filter(saved) if value else queryset.exclude(saved)

    def filter_archived(self, queryset: QuerySet[Run], name: str, value: str) -> QuerySet[Run]:
        if value == "all":
            return queryset
        return queryset.filter(archived_at__isnull=value != "true")

    def filter_tag(self, queryset: QuerySet[Run], name: str, value: str) -> QuerySet[Run]:
        return queryset.filter(tags__contains=[value])

    def filter_kind(self, queryset: QuerySet[Run], name: str, value: str) -> QuerySet[Run]:
        return queryset.filter(kind=value)


class RunViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ProjectScopedViewSet):
    """Training runs of your projects. Viewers read; members create and control runs."""

    queryset = Run.objects.select_related("project", "created_by", *SUMMARY_RELATED).order_by(
        "-created_at", "-id"
    )
    serializer_class = RunSerializer
    filterset_class = RunFilter
    list_joins_as_written = True
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]

    def get_queryset(self) -> QuerySet[Run]:
        queryset = super().get_queryset()
        if self.action != "list":
            return queryset.prefetch_related("status_history__actor", "attempts")
        if "kind" not in self.request.query_params:
            queryset = queryset.filter(kind=RunKind.TRAIN)  # evaluations list on their own page
        if "archived" not in self.request.query_params:
            queryset = queryset.filter(archived_at__isnull=True)  # RunFilter.archived's default
        return queryset

    def get_serializer_class(self) -> Any:
        return {"list": RunSerializer, "retrieve": RunDetailSerializer}.get(
            self.action, RunDetailSerializer
        )

    def _detail(self, run_id: int, code: int = status.HTTP_200_OK) -> Response:
        run = self.get_queryset().get(pk=run_id)
        return Response(RunDetailSerializer(run).data, status=code)

    @extend_schema(request=RunCreateSerializer, responses={201: RunDetailSerializer})
    def create(self, request: Request) -> Response:
        """Create a queued run. The config is resolved as defaults <- preset <- `config`
        <- `overrides` and stored in full; errors are keyed by config path."""
        data = RunCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        project = self.project_for(data.validated_data["project"])
        run = service.create_run(
            project, CreateRun.from_validated(data.validated_data), signed_in_user(request)
        )
        return self._detail(run.pk, status.HTTP_201_CREATED)

    @extend_schema(request=RunUpdateSerializer, responses=RunDetailSerializer)
    def partial_update(self, request: Request, pk: str | None = None) -> Response:
        """Rename, re-tag, annotate or reprioritise. The config can't change: clone instead."""
        run = self.get_object()
        data = RunUpdateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        changes = RunChanges.from_validated(data.validated_data)
        service.update_run(run, changes, signed_in_user(request))
        return self._detail(run.pk)

    @extend_schema(request=RunCloneSerializer, responses={201: RunDetailSerializer, 409: CONFLICT})
    @action(detail=True, methods=["post"])
    def clone(self, request: Request, pk: str | None = None) -> Response:
        """A new queued run from this one's config, with optional edits (a partial
        `config` tree and `overrides`), name, priority, tags and notes."""
        parent = self.get_object()
        data = RunCloneSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        run = service.clone_run(
            parent, CloneRun.from_validated(data.validated_data), signed_in_user(request)
        )
        return self._detail(run.pk, status.HTTP_201_CREATED)

    @extend_schema(request=ReasonSerializer, responses={200: RunDetailSerializer, 409: CONFLICT})
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str | None = None) -> Response:
        """A queued run is cancelled at once; a starting or running one goes to
        `cancelling` until its job has stopped. Cancelling twice is harmless."""
        run = self.get_object()
        service.cancel_run(run, signed_in_user(request), reason_of(request))
        return self._detail(run.pk)

    @extend_schema(request=ReasonSerializer, responses={200: RunDetailSerializer, 409: CONFLICT})
    @action(detail=True, methods=["post"])
    def resume(self, request: Request, pk: str | None = None) -> Response:
        """Queue a failed or cancelled run again; it continues from its latest checkpoint."""
        run = self.get_object()
        service.resume_run(run, signed_in_user(request), reason_of(request))
        return self._detail(run.pk)

    @extend_schema(responses={200: DeletedRunSerializer, 409: HELD})
    def destroy(self, request: Request, pk: str | None = None) -> Response:
        """Delete a run that has ended, with its metrics, samples, logs and checkpoints,
        and its files (checkpoint folder, spool); answers the bytes freed. Refused (409)
        for a live run (cancel it first) and for one a model or an evaluation uses."""
        run = self.get_object()
        freed = deletion.delete_run(run, signed_in_user(request))
        return Response(
            DeletedRunSerializer({"id": run.pk, "name": run.name, "freed_bytes": freed}).data
        )

    @extend_schema(request=None, responses={200: RunDetailSerializer, 409: CONFLICT})
    @action(detail=True, methods=["post"])
    def archive(self, request: Request, pk: str | None = None) -> Response:
        """Hide a run that has ended from the runs list (`?archived=true` lists it); it
        stays readable by id. Archiving frees no storage: delete the run for that."""
        run = self.get_object()
        deletion.archive_run(run, signed_in_user(request))
        return self._detail(run.pk)

    @extend_schema(request=None, responses=RunDetailSerializer)
    @action(detail=True, methods=["post"])
    def unarchive(self, request: Request, pk: str | None = None) -> Response:
        """List an archived run again."""
        run = self.get_object()
        deletion.unarchive_run(run, signed_in_user(request))
        return self._detail(run.pk)

    @extend_schema(request=PrioritySerializer, responses=RunDetailSerializer)
    @action(detail=True, methods=["post"])
    def priority(self, request: Request, pk: str | None = None) -> Response:
        """Change the run's place in the queue (higher starts first)."""
        run = self.get_object()
        data = PrioritySerializer(data=request.data)
        data.is_valid(raise_exception=True)
        service.set_priority(run, data.validated_data["priority"], signed_in_user(request))
        return self._detail(run.pk)


@cache
def resolved_presets() -> list[dict[str, Any]]:
    return [{"name": n, "config": resolve(preset=n).tree} for n in preset_names() if n in PRESETS]


class ConfigSchemaView(APIView):
    """The JSON schema of a run config; the browser renders the run form from it."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request) -> Response:
        return Response(RunConfig.model_json_schema())


class ConfigPresetsView(APIView):
    """Named configs, each resolved over the defaults."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses=PresetSerializer(many=True))
    def get(self, request: Request) -> Response:
        return Response(resolved_presets())


class ConfigValidateView(APIView):
    """Resolve a preset + partial config + overrides without creating a run."""

    permission_classes = [IsAuthenticated]

    @extend_schema(request=ConfigRequestSerializer, responses=ConfigValidationSerializer)
    def post(self, request: Request) -> Response:
        data = ConfigRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        try:
            resolved = resolve(v.get("config"), v.get("overrides"), v.get("preset"))
        except InvalidConfig as exc:
            return Response({"valid": False, "errors": exc.errors})
        ignored = [{"key": i.key, "reason": i.reason} for i in resolved.ignored]
        return Response({"valid": True, "config": resolved.tree, "ignored": ignored})

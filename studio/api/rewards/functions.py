"""Reward functions with immutable versions, diffs, built-in templates, and the
synchronous test of a version (small inputs scored inside the request; the queued
test-runs with sampled completions are studio.api.rewards.test_runs)."""

from __future__ import annotations

import difflib
from typing import Any

import django_filters.rest_framework as filters
from django.db import transaction
from django.db.models import Count, Max, Prefetch, QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import exceptions, mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from studio.api.common.permissions import signed_in_user
from studio.api.common.resources import VERSION_NUMBER, ProjectResourceViewSet
from studio.api.common.scoping import ProjectScopedViewSet, project_ids_of
from studio.api.rewards.test_runs import test_run_inputs
from studio.projects.models import Project
from studio.rewards import lifecycle
from studio.rewards.models import RewardFunction, RewardTestRun, RewardVersion
from studio.rewards.serializers import (
    RewardDiffSerializer,
    RewardFunctionCreateSerializer,
    RewardFunctionSerializer,
    RewardFunctionUpdateSerializer,
    RewardTemplateSerializer,
    RewardVersionCreateSerializer,
    RewardVersionSerializer,
    RewardVersionSummarySerializer,
)
from studio.rewards.services import create_function, push_version
from studio.rewards.testrun_serializers import (
    RewardTestRequestSerializer,
    RewardTestResultSerializer,
)
from trainer.rewards import builtin_source
from trainer.rewards.builtins import TEMPLATE_NAMES

Source = RewardTestRun.Source


class SandboxUnavailable(exceptions.APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_code = "sandbox_unavailable"
    default_detail = "The reward sandbox is not available on this server."


class RewardFunctionFilter(filters.FilterSet):
    project = filters.CharFilter(field_name="project__slug", help_text="A project's slug.")
    search = filters.CharFilter(
        field_name="name", lookup_expr="icontains", help_text="Part of the function's name."
    )

    class Meta:
        model = RewardFunction
        fields = ["project", "search"]


@extend_schema_view(
    partial_update=extend_schema(
        request=RewardFunctionUpdateSerializer,
        responses=RewardFunctionSerializer,
        description="Rename or describe a reward function. Its versions never change.",
    )
)
class RewardFunctionViewSet(ProjectResourceViewSet):
    """Reward functions of your projects. Viewers read; members create, push versions and
    test-run; deleting one needs the owner role."""

    queryset = (
        RewardFunction.objects.select_related("project", "created_by")
        .annotate(version_count=Count("versions"))
        .prefetch_related(
            Prefetch(
                "versions",
                queryset=RewardVersion.objects.select_related("author")
                .defer("code")
                .order_by("-number"),
                to_attr="ordered_versions",
            )
        )
        .order_by("name", "id")
    )
    serializer_class = RewardFunctionSerializer
    update_serializer_class = RewardFunctionUpdateSerializer
    filterset_class = RewardFunctionFilter
    noun = "reward function"
    audit_prefix = "reward"

    @extend_schema(
        request=RewardFunctionCreateSerializer, responses={201: RewardFunctionSerializer}
    )
    def create(self, request: Request) -> Response:
        """Create a reward function, optionally with version 1 from `code` or a built-in
        template (`from_template`)."""
        data = RewardFunctionCreateSerializer(
            data=request.data, context=self.get_serializer_context()
        )
        data.is_valid(raise_exception=True)
        v = data.validated_data
        function = create_function(
            v["project"],
            v["name"],
            v["description"],
            signed_in_user(request),
            code=v.get("code"),
            entrypoint=v["entrypoint"],
            message=v["message"],
            template=v.get("from_template", ""),
        )
        return self.detail_response(function.pk, status.HTTP_201_CREATED)

    @extend_schema(
        parameters=[
            OpenApiParameter("from", int, description="Older version number (default: to - 1)."),
            OpenApiParameter("to", int, description="Newer version number (default: latest)."),
        ],
        responses=RewardDiffSerializer,
    )
    @action(detail=True, methods=["get"])
    def diff(self, request: Request, pk: str | None = None) -> Response:
        """Unified diff between two versions' code."""
        function = self.get_object()
        latest = function.versions.aggregate(last=Max("number"))["last"]
        if latest is None:
            raise exceptions.NotFound("This reward function has no versions yet.")
        to_number = _version_param(request, "to", latest)
        from_number = _version_param(request, "from", max(1, to_number - 1))
        versions = {
            v.number: v for v in function.versions.filter(number__in=[from_number, to_number])
        }
        for key, number in (("from", from_number), ("to", to_number)):
            if number not in versions:
                raise exceptions.ValidationError(
                    {key: [f"No version {number}; versions are 1 to {latest}."]}
                )
        old, new = versions[from_number], versions[to_number]
        lines = difflib.unified_diff(
            old.code.splitlines(),
            new.code.splitlines(),
            fromfile=f"{function.name} v{old.number}",
            tofile=f"{function.name} v{new.number}",
            lineterm="",
        )
        text = "\n".join(lines)
        body = {
            "from_version": old.number,
            "to_version": new.number,
            "from_hash": old.code_hash,
            "to_hash": new.code_hash,
            "diff": text + "\n" if text else "",
        }
        return Response(body)


def _version_param(request: Request, name: str, default: int) -> int:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise exceptions.ValidationError({name: [f"A version number, got {raw!r}."]}) from None
    if value < 1:
        raise exceptions.ValidationError({name: [f"Versions start at 1, got {value}."]})
    return value


@extend_schema_view(retrieve=extend_schema(parameters=[VERSION_NUMBER]))
@extend_schema(
    parameters=[
        OpenApiParameter(
            "function_id", int, OpenApiParameter.PATH, description="The function's id."
        ),
    ]
)
class RewardVersionViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ProjectScopedViewSet):
    """Immutable versions of one reward function: push, read, test-run in the sandbox."""

    queryset = RewardVersion.objects.select_related("function__project", "author").order_by(
        "-number"
    )
    serializer_class = RewardVersionSerializer
    project_path = "function__project"
    lookup_field = "number"
    lookup_value_regex = "[0-9]+"
    pagination_class = None

    def get_queryset(self) -> QuerySet[RewardVersion]:
        queryset = super().get_queryset().filter(function_id=self.kwargs["function_id"])
        return queryset.defer("code") if self.action == "list" else queryset

    def get_serializer_class(self) -> Any:
        return RewardVersionSummarySerializer if self.action == "list" else RewardVersionSerializer

    def get_function(self) -> RewardFunction:
        visible = RewardFunction.objects.select_related("project").filter(
            project__in=project_ids_of(signed_in_user(self.request))
        )
        return get_object_or_404(visible, pk=self.kwargs["function_id"])

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Versions, newest first (without their code; read one version for it)."""
        self.get_function()
        return super().list(request, *args, **kwargs)

    @extend_schema(request=RewardVersionCreateSerializer, responses={201: RewardVersionSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Push a new version. The code is checked statically first (size, syntax with the
        line number, the entry point defined); nothing runs."""
        function = self.get_function()
        self.require_role(function.project)
        data = RewardVersionCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        version = push_version(
            function, v["code"], v["entrypoint"], v["message"], signed_in_user(request)
        )
        version = self.get_queryset().get(pk=version.pk)
        return Response(RewardVersionSerializer(version).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        parameters=[VERSION_NUMBER],
        request=RewardTestRequestSerializer,
        responses={
            200: RewardTestResultSerializer,
            503: OpenApiResponse(description="The sandbox can't run untrusted code here."),
        },
    )
    @action(detail=True, methods=["post"])
    def test(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Score pasted completions, or dataset rows with their reference answers as
        responses, inside this request, and summarise the scores. Bounded to 200 rows and
        a total time budget; the code's failures come back as per-row errors. The run is
        recorded as a test-run; completions sampled from a model need a queued test-run
        (POST /api/reward-test-runs/)."""
        version = self.get_object()  # POST: needs the member role
        project: Project = version.function.project
        data = RewardTestRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        source = Source.COMPLETIONS if "completions" in v else Source.REFERENCES
        params, dataset_version, _ = test_run_inputs(v, project, source)
        with transaction.atomic():
            test_run = lifecycle.create(
                version,
                source,
                params,
                signed_in_user(request),
                dataset_version=dataset_version,
                completions=v.get("completions"),
            )
            self.audit(
                "reward.test",
                test_run,
                project,
                number=version.number,
                source=source,
                dataset_version=dataset_version.pk if dataset_version else None,
                inline=True,
            )
        test_run = lifecycle.run_inline(test_run)
        if test_run.result is None:  # ended before scoring
            if test_run.error_code == "sandbox_unavailable":
                raise SandboxUnavailable(test_run.error)
            raise exceptions.ValidationError({"dataset_version": [test_run.error]})
        body = {
            "test_run": test_run.pk,
            "function": version.function_id,
            "version": version.number,
            "dataset_version": dataset_version.pk if dataset_version else None,
            **test_run.result,
        }
        return Response(body)


class RewardTemplateViewSet(viewsets.ViewSet):
    """The built-in reward functions, as code to start a reward function from."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses=RewardTemplateSerializer(many=True))
    def list(self, request: Request) -> Response:
        templates = []
        for name in TEMPLATE_NAMES:
            code = builtin_source(name)
            templates.append({"name": name, "description": _summary_line(code), "code": code})
        return Response(templates)


def _summary_line(code: str) -> str:
    """The docstring's first paragraph as plain text: its lines joined, reST's double
    backticks dropped (the UI shows it as text)."""
    import ast

    docstring = ast.get_docstring(ast.parse(code)) or ""
    paragraph = docstring.strip().split("\n\n", 1)[0]
    return " ".join(paragraph.split()).replace("``", "")

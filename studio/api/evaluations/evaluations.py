"""Evaluations: models and checkpoints answering a dataset's prompts, scored by a reward.

An evaluation is a run of kind `evaluation` (studio.evaluations.creation): it queues,
launches, reports and cancels as a run does, and its samples are browsable in the rollout
explorer (split `eval`, one step per model). These views create and read them; the run
views (/api/runs/{id}/...) serve its logs, samples and metrics.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, mixins, status
from rest_framework.decorators import action
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from studio.api.common.permissions import signed_in_user
from studio.api.common.scoping import ProjectScopedViewSet
from studio.api.runs.reports import REPORT, HtmlRenderer
from studio.api.runs.runs import ProjectRunsFilter, reason_of
from studio.evaluations.creation import (
    CreateEvaluation,
    checkpoints_and_base,
    create_evaluation,
)
from studio.evaluations.questions import QUESTION_RELATED, ask_checkpoints
from studio.evaluations.serializers import (
    AskCheckpointsSerializer,
    EvaluationCreateSerializer,
    EvaluationDetailSerializer,
    EvaluationSerializer,
    RunCheckpointsEvaluationSerializer,
)
from studio.projects.models import Role
from studio.references.summary import SUMMARY_RELATED
from studio.reports.data import evaluation_report_filename, evaluation_report_html
from studio.runs import service
from studio.runs.models import Run, RunKind
from studio.runs.serializers import ReasonSerializer
from studio.telemetry.models import RolloutSample

CONFLICT = OpenApiResponse(description="The evaluation's status does not allow this action.")


class EvaluationViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ProjectScopedViewSet):
    """Evaluations of your projects. Viewers read; members create and cancel them."""

    queryset = (
        Run.objects.filter(kind=RunKind.EVALUATION)
        .select_related("project", "created_by", QUESTION_RELATED, *SUMMARY_RELATED)
        .order_by("-created_at", "-id")
    )
    serializer_class = EvaluationSerializer
    filterset_class = ProjectRunsFilter
    list_joins_as_written = True
    object_noun = "evaluation"
    http_method_names = ["get", "post", "head", "options"]

    def get_serializer_class(self) -> Any:
        return EvaluationSerializer if self.action == "list" else EvaluationDetailSerializer

    def _detail(self, run_id: int, code: int = status.HTTP_200_OK) -> Response:
        run = self.get_queryset().get(pk=run_id)
        return Response(EvaluationDetailSerializer(run).data, status=code)

    def _create(self, project_slug: str, request: CreateEvaluation) -> Response:
        project = self.project_for(project_slug)
        run = create_evaluation(project, request, signed_in_user(self.request))
        return self._detail(run.pk, status.HTTP_201_CREATED)

    @extend_schema(request=EvaluationCreateSerializer, responses={201: EvaluationDetailSerializer})
    def create(self, request: Request) -> Response:
        """Queue an evaluation of models and checkpoints on a dataset version or a run's
        validation data. Errors are keyed by request field."""
        data = EvaluationCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        return self._create(v["project"], CreateEvaluation.from_validated(v))

    @extend_schema(
        request=RunCheckpointsEvaluationSerializer, responses={201: EvaluationDetailSerializer}
    )
    @action(detail=False, methods=["post"], url_path="run-checkpoints")
    def run_checkpoints(self, request: Request) -> Response:
        """Evaluate every reachable checkpoint of a run, and its base model as the baseline,
        on the run's validation data with its reward."""
        data = RunCheckpointsEvaluationSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        run = (
            Run.objects.filter(
                pk=v["run"], kind=RunKind.TRAIN, project__memberships__user=signed_in_user(request)
            )
            .select_related("project")
            .first()
        )
        if run is None:
            raise exceptions.NotFound("No such run.")
        self.require_role(run.project, Role.MEMBER)
        models = checkpoints_and_base(run, "run")
        name = v.get("name") or f"{run.name}: checkpoints"
        fixed = {"models": models, "validation_of_run": run.pk, "name": name[:200]}
        return self._create(run.project.slug, CreateEvaluation.from_validated(v, **fixed))

    @extend_schema(
        operation_id="evaluations_report",
        parameters=[OpenApiParameter("format", exclude=True)],
        responses={
            (200, "text/html"): REPORT,
            404: OpenApiResponse(description="No such evaluation in your projects."),
        },
    )
    @action(detail=True, methods=["get"], renderer_classes=[JSONRenderer, HtmlRenderer])
    def report(self, request: Request, pk: str | None = None) -> HttpResponse:
        """The evaluation's report: the models side by side, scores per data source, the
        chart across checkpoints with its data, and what it used (models and checkpoints,
        prompts, reward, sampling), as one HTML attachment that opens offline."""
        run = self.get_object()
        response = HttpResponse(
            evaluation_report_html(run), content_type="text/html; charset=utf-8"
        )
        name = evaluation_report_filename(run)
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response

    @extend_schema(request=AskCheckpointsSerializer, responses={201: EvaluationDetailSerializer})
    @action(detail=False, methods=["post"])
    def ask(self, request: Request) -> Response:
        """Ask the checkpoints: a training run's sample's prompt, answered by every
        reachable checkpoint of the run and its base model (docs/evaluate.md)."""
        data = AskCheckpointsSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        user = signed_in_user(request)
        sample = (
            RolloutSample.objects.filter(pk=v["sample"], run__project__memberships__user=user)
            .select_related("run__project")
            .first()
        )
        if sample is None:
            raise exceptions.NotFound("No such sample.")
        project = sample.run.project
        self.require_role(project, Role.MEMBER)
        run = ask_checkpoints(sample, v, user)
        return self._detail(run.pk, status.HTTP_201_CREATED)

    @extend_schema(
        request=ReasonSerializer, responses={200: EvaluationDetailSerializer, 409: CONFLICT}
    )
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str | None = None) -> Response:
        """As a run: a queued evaluation ends at once, a running one once its job stopped."""
        run = self.get_object()
        service.cancel_run(run, signed_in_user(request), reason_of(request))
        return self._detail(run.pk)

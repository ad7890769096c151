"""Reward test-runs: start one (a worker runs it), then poll its status, progress and
result. Viewers read; members start them. The synchronous test endpoint of a version
(studio.api.rewards.functions) goes through the same checks and the same lifecycle."""

from __future__ import annotations

from typing import Any

import django_filters.rest_framework as filters
from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.db.models.fields.json import KeyTransform
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, mixins, status
from rest_framework.request import Request
from rest_framework.response import Response

from studio.api.common.permissions import signed_in_user
from studio.api.common.scoping import ProjectScopedViewSet
from studio.datasets.models import DatasetVersion
from studio.projects.models import Project
from studio.rewards import lifecycle
from studio.rewards.models import RewardTestRun, RewardVersion
from studio.rewards.testrun_serializers import (
    RewardTestRunCreateSerializer,
    RewardTestRunSerializer,
    RewardTestRunSummarySerializer,
)
from studio.runs.models import Checkpoint
from trainer.config.sampling import SamplingParams

Source = RewardTestRun.Source


def test_run_inputs(
    v: dict[str, Any], project: Project, source: str
) -> tuple[lifecycle.Params, DatasetVersion | None, Checkpoint | None]:
    """The stored parameters and the objects a validated request names, each checked to
    belong to `project` (errors name the field)."""
    dataset_version: DatasetVersion | None = None
    if "dataset_version" in v:
        dataset_version = (
            DatasetVersion.objects.select_related("dataset")
            .filter(pk=v["dataset_version"], dataset__project=project)
            .first()
        )
        if dataset_version is None:
            raise exceptions.ValidationError(
                {"dataset_version": [f"No dataset version {v['dataset_version']} in this project."]}
            )
        if v["offset"] >= dataset_version.row_count:
            raise exceptions.ValidationError(
                {
                    "offset": [
                        f"The dataset version has {dataset_version.row_count} rows; "
                        f"offset {v['offset']} is past the end."
                    ]
                }
            )
    checkpoint: Checkpoint | None = None
    if "checkpoint" in v:
        checkpoint = Checkpoint.objects.filter(pk=v["checkpoint"], run__project=project).first()
        if checkpoint is None:
            raise exceptions.ValidationError(
                {"checkpoint": [f"No checkpoint {v['checkpoint']} in this project's runs."]}
            )
    sampling = lifecycle.TEST_RUN_SAMPLING  # the synchronous test samples nothing
    if "samples_per_prompt" in v:  # a queued test-run: each field has a serializer default
        sampling = SamplingParams(
            n=v["samples_per_prompt"],
            temperature=v["temperature"],
            top_p=v["top_p"],
            top_k=v["top_k"],
            max_new_tokens=v["max_new_tokens"],
            seed=v["seed"],
        )
    params = lifecycle.Params(
        rows=v["rows"],
        offset=v["offset"],
        solution_template=v["solution_template"],
        timeout_s=v["timeout_s"],
        budget_s=float(settings.RLSTUDIO_REWARD_TEST_BUDGET_S),
        sampling=sampling,
        kwargs=v["kwargs"],
    )
    return params, dataset_version, checkpoint


class RewardTestRunFilter(filters.FilterSet):
    project = filters.CharFilter(
        field_name="version__function__project__slug", help_text="A project's slug."
    )
    function = filters.NumberFilter(field_name="version__function_id", help_text="Function id.")
    reward_version = filters.NumberFilter(field_name="version_id", help_text="Version id.")
    status = filters.ChoiceFilter(choices=RewardTestRun.Status.choices)

    class Meta:
        model = RewardTestRun
        fields = ["project", "function", "reward_version", "status"]


class RewardTestRunViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ProjectScopedViewSet):
    """Test-runs of reward versions in your projects, newest first. Poll one for its
    `status` and `progress`; its `result` holds per-row scores and the summary."""

    queryset = RewardTestRun.objects.select_related(
        "version__function__project", "created_by"
    ).defer("completions")
    serializer_class = RewardTestRunSerializer
    filterset_class = RewardTestRunFilter
    project_path = "version__function__project"
    http_method_names = ["get", "post", "head", "options"]

    def get_queryset(self) -> QuerySet[RewardTestRun]:
        queryset = super().get_queryset()
        if self.action == "list":  # rows stay in the database; the summary is enough
            queryset = queryset.annotate(result_summary=KeyTransform("summary", "result")).defer(
                "result"
            )
        return queryset

    def get_serializer_class(self) -> Any:
        if self.action == "list":
            return RewardTestRunSummarySerializer
        return RewardTestRunSerializer

    @extend_schema(request=RewardTestRunCreateSerializer, responses={202: RewardTestRunSerializer})
    def create(self, request: Request) -> Response:
        """Start a test-run of a reward version: rows of a dataset version answered by
        their references or by completions sampled from the demo model or a checkpoint,
        or pasted completions. It is queued for a worker (202); poll it for progress."""
        data = RewardTestRunCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        version = (
            RewardVersion.objects.select_related("function__project")
            .filter(
                pk=v["reward_version"],
                function__project__memberships__user=signed_in_user(request),
            )
            .first()
        )
        if version is None:
            raise exceptions.NotFound(f"No reward version {v['reward_version']} in your projects.")
        project = version.function.project
        self.require_role(project)
        params, dataset_version, checkpoint = test_run_inputs(v, project, v["source"])
        with transaction.atomic():
            test_run = lifecycle.create(
                version,
                v["source"],
                params,
                signed_in_user(request),
                dataset_version=dataset_version,
                checkpoint=checkpoint,
                completions=v.get("completions"),
            )
            self.audit(
                "reward.test",
                test_run,
                project,
                number=version.number,
                source=v["source"],
                dataset_version=dataset_version.pk if dataset_version else None,
                checkpoint=checkpoint.pk if checkpoint else None,
            )
            lifecycle.enqueue(test_run.pk)
        created = self.get_queryset().get(pk=test_run.pk)
        return Response(RewardTestRunSerializer(created).data, status=status.HTTP_202_ACCEPTED)

"""Rollout samples: filtered cursor pages, GRPO groups, detail, labels, export."""

from __future__ import annotations

import math
import statistics
from typing import Any

import django_filters.rest_framework as filters
from django.db import IntegrityError
from django.db.models import BooleanField, ExpressionWrapper, Prefetch, Q, QuerySet
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, mixins, status
from rest_framework.decorators import action
from rest_framework.filters import OrderingFilter
from rest_framework.request import Request
from rest_framework.response import Response

from studio.api.common.pagination import SampleCursorPagination
from studio.api.common.permissions import project_of, signed_in_user
from studio.api.common.scoping import ProjectScopedViewSet
from studio.api.runs.metrics import readable_runs
from studio.datasets.models import Dataset
from studio.runs.models import Run
from studio.telemetry.models import RolloutSample, SampleLabel
from studio.telemetry.samples.export import (
    DatasetNameTaken,
    ExportTarget,
    NothingToExport,
    export_labelled,
    preview_export,
)
from studio.telemetry.samples.filters import SampleFilter
from studio.telemetry.samples.labels import add_label, remove_label
from studio.telemetry.samples.serializers import (
    ExportedVersionSerializer,
    ExportPreviewSerializer,
    LabelledExportSerializer,
    RolloutSampleDetailSerializer,
    RolloutSampleSerializer,
    SampleGroupQuerySerializer,
    SampleGroupSerializer,
    SampleLabelSerializer,
    SampleLabelWriteSerializer,
)

GROUP_LIMIT = 1000


def score_summary(samples: list[RolloutSample]) -> tuple[float | None, float | None]:
    scores = [s.score for s in samples if math.isfinite(s.score)]
    if not scores:
        return None, None
    return statistics.fmean(scores), statistics.pstdev(scores)


class SampleViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ProjectScopedViewSet):
    """Rollout samples of runs in your projects. Labelling needs the member role."""

    queryset = RolloutSample.objects.all()
    serializer_class = RolloutSampleSerializer
    filterset_class = SampleFilter
    filter_backends = [filters.DjangoFilterBackend, OrderingFilter]
    ordering_fields = ["id"]
    ordering = ["-id"]
    pagination_class = SampleCursorPagination
    project_path = "run__project"

    def get_queryset(self) -> QuerySet[RolloutSample]:
        user = self.request.user
        if not user.is_authenticated:
            return RolloutSample.objects.none()
        labels = SampleLabel.objects.select_related("author").order_by("id")
        samples = RolloutSample.objects.prefetch_related(
            Prefetch("labels", queryset=labels)
        ).select_related("reward_version__function")
        if self.action == "retrieve":
            samples = samples.defer("search")
        else:  # token data and turns only travel in the detail
            samples = samples.defer("search", "token_data", "turns").annotate(
                token_data_recorded=ExpressionWrapper(
                    Q(token_data__isnull=False), output_field=BooleanField()
                )
            )
        if self.action in ("list", "group"):
            # The run was checked readable first; no membership join needed.
            return samples.filter(run_id=self.run.pk, superseded=False)
        # One membership per (project, user): the join cannot duplicate rows, so no
        # DISTINCT (which would defeat the cursor's index scan).
        return samples.filter(run__project__memberships__user=user)

    def get_serializer_class(self) -> Any:
        if self.action == "retrieve":
            return RolloutSampleDetailSerializer
        return super().get_serializer_class()

    @extend_schema(
        responses={
            200: RolloutSampleSerializer(many=True),
            400: OpenApiResponse(description="A filter is missing or invalid."),
            404: OpenApiResponse(description="The run is not in your projects."),
        }
    )
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Live samples of one run, newest first (`ordering=id` for oldest first), in
        cursor pages that stay stable while the run adds samples."""
        raw = request.query_params.get("run", "")
        if not raw.isdigit():
            raise exceptions.ValidationError(
                {"run": [f"Give the run's id, e.g. ?run=12 (got {raw!r:.40})."]}
            )
        (self.run,) = readable_runs(request, [int(raw)])
        return super().list(request, *args, **kwargs)

    def filter_queryset(self, queryset: QuerySet[Any]) -> QuerySet[Any]:
        # The filters (run is required) are the list's; a detail is found by id alone.
        return super().filter_queryset(queryset) if self.action == "list" else queryset

    @extend_schema(
        parameters=[SampleGroupQuerySerializer],
        responses={
            200: SampleGroupSerializer,
            400: OpenApiResponse(description="A parameter is missing or invalid."),
            404: OpenApiResponse(description="The run is not in your projects."),
        },
    )
    @action(detail=False, methods=["get"], filter_backends=[], pagination_class=None)
    def group(self, request: Request) -> Response:
        """Every live sample of one prompt at one step (a GRPO group), by id."""
        query = SampleGroupQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        v = query.validated_data
        (self.run,) = readable_runs(request, [v["run"]])
        samples = list(
            self.get_queryset()
            .filter(step=v["step"], group_id=v["group_id"])
            .order_by("id")[:GROUP_LIMIT]
        )
        mean, std = score_summary(samples)
        return Response(
            {
                "run": self.run.pk,
                "step": v["step"],
                "group_id": v["group_id"],
                "count": len(samples),
                "score_mean": mean,
                "score_std": std,
                "samples": RolloutSampleSerializer(samples, many=True).data,
            }
        )

    @extend_schema(
        methods=["POST"],
        request=SampleLabelWriteSerializer,
        responses={
            200: SampleLabelSerializer,
            201: SampleLabelSerializer,
            400: OpenApiResponse(description="The label or note is invalid."),
            403: OpenApiResponse(description="Labelling needs the member role."),
            404: OpenApiResponse(description="No such sample in your projects."),
        },
    )
    @extend_schema(
        methods=["DELETE"],
        parameters=[
            OpenApiParameter("label", str, required=True, description="The label to remove.")
        ],
        request=None,
        responses={
            204: None,
            400: OpenApiResponse(description="No label named."),
            403: OpenApiResponse(description="Labelling needs the member role."),
            404: OpenApiResponse(description="No such sample, or you have no such label on it."),
        },
    )
    @action(detail=True, methods=["post", "delete"], filter_backends=[], pagination_class=None)
    def labels(self, request: Request, pk: str | None = None) -> Response:
        """POST adds your label (or changes its note: 200); DELETE removes your label
        named by `label` (query parameter or body). Viewers may not label."""
        sample = self.get_object()  # members and owners only, for both methods
        project = project_of(sample)
        user = signed_in_user(request)
        if request.method == "DELETE":
            given = request.query_params.get("label") or (
                request.data.get("label") if hasattr(request.data, "get") else None
            )
            named = SampleLabelWriteSerializer(data={"label": given})
            named.is_valid(raise_exception=True)
            name = named.validated_data["label"]
            if not remove_label(sample, project, user, name):
                raise exceptions.NotFound(f"You have no label {name!r:.70} on sample {sample.pk}.")
            return Response(status=status.HTTP_204_NO_CONTENT)
        data = SampleLabelWriteSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        label, created = add_label(sample, project, user, v["label"], v["note"])
        code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return Response(SampleLabelSerializer(label).data, status=code)


class RunSamplesViewSet(ProjectScopedViewSet):
    """Sample actions of one run (routed explicitly under /api/runs/{id}/)."""

    queryset = Run.objects.select_related("project")
    serializer_class = LabelledExportSerializer  # also what OPTIONS describes

    @extend_schema(
        request=LabelledExportSerializer,
        responses={
            200: ExportPreviewSerializer,
            201: ExportedVersionSerializer,
            400: OpenApiResponse(
                description="No such dataset here, the new dataset's name is taken, or "
                "nothing to export."
            ),
            403: OpenApiResponse(description="Exporting (and previewing) needs the member role."),
            404: OpenApiResponse(description="No such run."),
        },
    )
    def export_labelled(self, request: Request, pk: int) -> Response:
        """Write the run's labelled samples (optionally one label) as a dataset version of
        the run's project, verl parquet, one row per prompt: `new_dataset` (a name)
        creates a dataset holding them as its v1; `dataset` (an id) adds them as the next
        version of that dataset, which becomes its latest. `dry_run: true` stores
        nothing and answers 200 with what the export would store: rows, rows per label,
        and the target (name, version number it would get, and the existing dataset's
        latest version and its rows)."""
        # The member role for the dry run too: it is the confirmation step of an export,
        # which a viewer could not then make, and it takes the same write-side checks
        # (the new name is free, the rows make a valid dataset). Viewers read a run's
        # labels and datasets through the read endpoints already.
        run = self.get_object()
        data = LabelledExportSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        target = self._target(run, v)
        label = v.get("label")
        try:
            if v["dry_run"]:
                preview = preview_export(run, target, label)
                body = {
                    "rows": preview.rows,
                    "samples": preview.samples,
                    "labels": [{"name": n, "count": c} for n, c in preview.labels],
                    "from_text": preview.from_text,
                    "examples": preview.examples,
                    "new_dataset": preview.dataset is None,
                    "dataset": preview.dataset.pk if preview.dataset is not None else None,
                    "name": preview.name,
                    "number": preview.number,
                    "latest_number": preview.latest_number,
                    "latest_rows": preview.latest_rows,
                }
                return Response(ExportPreviewSerializer(body).data)

            def audited(version: Any) -> None:
                self.audit(
                    "dataset.export_labelled",
                    version,
                    run.project,
                    run=run.pk,
                    dataset=version.dataset.name,
                    new_dataset=target.dataset is None,
                    number=version.number,
                    label=label,
                    rows=version.row_count,
                )

            version = export_labelled(run, target, label, signed_in_user(request), audited)
        except DatasetNameTaken as exc:
            raise exceptions.ValidationError({"new_dataset": [str(exc)]}) from None
        except NothingToExport as exc:
            raise exceptions.ValidationError({"label": [str(exc)]}) from None
        except IntegrityError:  # a concurrent upload took the number despite the lock
            raise exceptions.ValidationError(
                {"dataset": ["Another version was created at the same time; try again."]}
            ) from None
        return Response(ExportedVersionSerializer(version).data, status=status.HTTP_201_CREATED)

    @staticmethod
    def _target(run: Run, v: dict[str, Any]) -> ExportTarget:
        if "new_dataset" in v:
            return ExportTarget(new_name=v["new_dataset"])
        # Another project's dataset gets the same answer as a missing one: ids don't leak.
        dataset = Dataset.objects.filter(pk=v["dataset"], project=run.project).first()
        if dataset is None:
            raise exceptions.ValidationError(
                {"dataset": [f"No such dataset in project {run.project.slug!r}."]}
            )
        return ExportTarget(dataset=dataset)

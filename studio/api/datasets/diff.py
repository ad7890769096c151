"""The diff of two versions of a dataset, paged. Anyone who may read the dataset."""

from __future__ import annotations

from dataclasses import asdict

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from studio.api.common.permissions import signed_in_user
from studio.api.common.scoping import project_ids_of
from studio.datasets.diff import diff_versions
from studio.datasets.diff_serializers import DatasetDiffSerializer, DiffQuerySerializer
from studio.datasets.models import Dataset, DatasetVersion


class DatasetDiffView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "from", int, description="The older version (default: the one before `to`)."
            ),
            OpenApiParameter("to", int, description="The newer version (default: the newest)."),
            OpenApiParameter("change", str, enum=["added", "removed", "changed"]),
            OpenApiParameter("offset", int),
            OpenApiParameter("limit", int, description="Rows per page, at most 100."),
        ],
        responses={
            200: DatasetDiffSerializer,
            400: OpenApiResponse(description="A version number or page bound is invalid."),
            404: OpenApiResponse(
                description="No such dataset in your projects, or no such version."
            ),
            422: OpenApiResponse(
                description="A version is over the import bounds, or one change alone is "
                "larger than a page may hold; the error names the bound."
            ),
        },
    )
    def get(self, request: Request, id: int) -> Response:
        """Rows added, removed and changed from version `from` to `to` (one page of them),
        their counts, and the columns added, removed or retyped. The page holds at most
        RLSTUDIO_PREVIEW_MAX_BYTES (4 MiB): a longer one is cut (`truncated`, `next_offset`)."""
        visible = Dataset.objects.filter(project__in=project_ids_of(signed_in_user(request)))
        dataset = get_object_or_404(visible, pk=id)
        params = {k: v for k, v in request.query_params.items() if k != "from"}
        if "from" in request.query_params:
            params["from_number"] = request.query_params["from"]
        query = DiffQuerySerializer(data=params)
        if not query.is_valid():
            errors = {("from" if k == "from_number" else k): v for k, v in query.errors.items()}
            raise exceptions.ValidationError(errors)
        q = query.validated_data
        versions = DatasetVersion.objects.filter(dataset=dataset)
        newest = versions.order_by("-number").values_list("number", flat=True).first()
        to = q.get("to", newest)
        if to is None:
            raise exceptions.ValidationError({"to": ["The dataset has no versions yet."]})
        start = q.get("from_number", to - 1)
        if start < 1:
            raise exceptions.ValidationError(
                {"from": [f"Version {to} is the first: name another version to compare with."]}
            )
        before = versions.filter(number=start).first()
        if before is None:
            raise exceptions.NotFound(f"Dataset {dataset.pk} has no version {start} (from).")
        after = versions.filter(number=to).first()
        if after is None:
            raise exceptions.NotFound(f"Dataset {dataset.pk} has no version {to} (to).")
        page = diff_versions(before, after, q["offset"], q["limit"], q.get("change"))
        return Response(DatasetDiffSerializer(asdict(page)).data)

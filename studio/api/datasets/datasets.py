"""Datasets and their immutable versions: upload, stats, preview and download.

An upload streams to a temporary file (size-capped), is validated and normalised to
parquet in a private staging folder, and only then moved into storage, in the same
transaction that creates the version row: a rejected upload leaves nothing behind.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import django_filters.rest_framework as filters
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import Count, Prefetch, QuerySet
from django.http import FileResponse, HttpRequest
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import exceptions, mixins, renderers, status
from rest_framework.decorators import action
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from studio.api.common.parsers import JSONParser
from studio.api.common.permissions import signed_in_user
from studio.api.common.resources import VERSION_NUMBER, ProjectResourceViewSet
from studio.api.common.scoping import ProjectScopedViewSet, project_ids_of
from studio.datasets import imports
from studio.datasets.files import read_page
from studio.datasets.limits import import_in_worker
from studio.datasets.models import Dataset, DatasetVersion
from studio.datasets.normalise import ColumnMapping
from studio.datasets.pages import page_max_bytes
from studio.datasets.serializers import (
    PREVIEW_MAX_LIMIT,
    DatasetCreateSerializer,
    DatasetImportSerializer,
    DatasetSerializer,
    DatasetUpdateSerializer,
    DatasetUploadSerializer,
    DatasetVersionSerializer,
    PreviewQuerySerializer,
    PreviewSerializer,
)
from studio.datasets.services import create_dataset
from studio.datasets.sniff import UploadError, check_content, source_format_of
from studio.datasets.stored import check_readable
from studio.datasets.uploads import LimitedTemporaryFileUploadHandler, check_content_length
from studio.datasets.versions import add_version, delete_files

UNREADABLE_VERSION = OpenApiResponse(
    description="The version is over the import bounds (stored before they applied to it, "
    "or they were lowered since), or one row alone is larger than a page may hold; the "
    "error names the bound."
)


class DatasetFilter(filters.FilterSet):
    project = filters.CharFilter(field_name="project__slug", help_text="A project's slug.")
    search = filters.CharFilter(
        field_name="name", lookup_expr="icontains", help_text="Part of the dataset's name."
    )

    class Meta:
        model = Dataset
        fields = ["project", "search"]


@extend_schema_view(
    partial_update=extend_schema(
        request=DatasetUpdateSerializer,
        responses=DatasetSerializer,
        description="Rename or describe a dataset. Its versions never change.",
    )
)
class DatasetViewSet(ProjectResourceViewSet):
    """Datasets of your projects. Viewers read; members create and upload versions;
    deleting a dataset (and its files) needs the owner role."""

    queryset = (
        Dataset.objects.select_related("project", "created_by")
        .annotate(version_count=Count("versions"))
        .prefetch_related(
            Prefetch(
                "versions",
                queryset=DatasetVersion.objects.select_related("created_by").order_by("-number"),
                to_attr="ordered_versions",
            )
        )
        .order_by("name", "id")
    )
    serializer_class = DatasetSerializer
    update_serializer_class = DatasetUpdateSerializer
    filterset_class = DatasetFilter
    noun = "dataset"
    audit_prefix = "dataset"

    @extend_schema(request=DatasetCreateSerializer, responses={201: DatasetSerializer})
    def create(self, request: Request) -> Response:
        """Create an empty dataset in a project (member role); upload versions next."""
        data = DatasetCreateSerializer(data=request.data, context=self.get_serializer_context())
        data.is_valid(raise_exception=True)
        v = data.validated_data
        dataset = create_dataset(v["project"], v["name"], v["description"], signed_in_user(request))
        return self.detail_response(dataset.pk, status.HTTP_201_CREATED)

    def after_delete(self, resource: Any) -> Callable[[], None]:
        files = list(resource.versions.values_list("file", flat=True))
        files += [n for n in resource.imports.values_list("staged_name", flat=True) if n]
        return lambda: delete_files(files)


class BinaryRenderer(renderers.BaseRenderer):
    """Lets `Accept: application/octet-stream` reach the download view."""

    media_type = "application/octet-stream"
    format = "bin"
    charset = None
    render_style = "binary"

    def render(self, data: Any, accepted_media_type: Any = None, context: Any = None) -> Any:
        return data


@extend_schema_view(retrieve=extend_schema(parameters=[VERSION_NUMBER]))
@extend_schema(
    parameters=[
        OpenApiParameter("dataset_id", int, OpenApiParameter.PATH, description="The dataset's id."),
    ]
)
class DatasetVersionViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ProjectScopedViewSet):
    """Immutable versions of one dataset: upload (multipart), stats, preview, download."""

    queryset = DatasetVersion.objects.select_related("dataset__project", "created_by").order_by(
        "-number"
    )
    serializer_class = DatasetVersionSerializer
    project_path = "dataset__project"
    lookup_field = "number"
    lookup_value_regex = "[0-9]+"
    pagination_class = None
    parser_classes = [MultiPartParser, JSONParser]

    def get_queryset(self) -> QuerySet[DatasetVersion]:
        return super().get_queryset().filter(dataset_id=self.kwargs["dataset_id"])

    def get_dataset(self) -> Dataset:
        visible = Dataset.objects.select_related("project").filter(
            project__in=project_ids_of(signed_in_user(self.request))
        )
        return get_object_or_404(visible, pk=self.kwargs["dataset_id"])

    def initialize_request(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Request:
        drf_request = super().initialize_request(request, *args, **kwargs)
        if self.action == "create":
            # Before anything reads the body (session auth's CSRF check reads form data).
            request.upload_handlers = [LimitedTemporaryFileUploadHandler(request)]
        return drf_request

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        if self.action == "create":
            check_content_length(request._request)  # 413 before a byte of the body is read
        super().initial(request, *args, **kwargs)

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Versions of the dataset, newest first."""
        self.get_dataset()  # 404 rather than an empty list for datasets you can't see
        return super().list(request, *args, **kwargs)

    @extend_schema(
        request={"multipart/form-data": DatasetUploadSerializer},
        responses={
            201: DatasetVersionSerializer,
            202: DatasetImportSerializer,
            413: OpenApiResponse(description="The upload is larger than the size limit."),
        },
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Upload a new version (multipart). Parquet, JSONL and CSV are validated against
        the verl format or the given column mapping and stored as parquet; errors name
        the row and column. Versions are immutable. A large upload (over
        RLSTUDIO_ASYNC_IMPORT_BYTES of decoded data, 8 MiB by default; a parquet file's
        footer says how much it decodes to) is imported in the background: 202 with the
        import, whose progress the dataset's `imports` show. An upload that passes the
        import bounds (decoded size, rows, characters in one value, time) is refused
        with a 400 naming the bound, before its data is decoded where the file
        declares it."""
        dataset = self.get_dataset()
        self.require_role(dataset.project)
        data = DatasetUploadSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        upload: UploadedFile = v["file"]
        mapping = ColumnMapping(
            format=v["format"],
            prompt_key=v["prompt_key"],
            answer_key=v["answer_key"],
            data_source=v["data_source"],
        )
        project = dataset.project

        def audited(version: DatasetVersion) -> None:
            self.audit(
                "dataset.upload",
                version,
                project,
                dataset=dataset.name,
                number=version.number,
                rows=version.row_count,
                checksum=version.checksum,
            )

        scratch = Path(
            tempfile.mkdtemp(prefix="rlstudio-upload-", dir=settings.FILE_UPLOAD_TEMP_DIR)
        )
        filename = Path(upload.name or "upload").name
        try:
            source = _on_disk(upload, scratch)
            source_format = source_format_of(filename)
            check_content(source, filename, source_format)
            if import_in_worker(source, filename, source_format):
                return self._import_later(dataset, source, filename, mapping, v["message"])
            version = add_version(
                dataset,
                source,
                filename,
                mapping,
                message=v["message"],
                user=signed_in_user(request),
                on_created=audited,
            )
        except UploadError as exc:
            raise exceptions.ValidationError({"file": [str(exc)]}) from None
        finally:
            upload.close()
            shutil.rmtree(scratch, ignore_errors=True)
        return Response(DatasetVersionSerializer(version).data, status=status.HTTP_201_CREATED)

    def _import_later(
        self, dataset: Dataset, source: Path, filename: str, mapping: ColumnMapping, message: str
    ) -> Response:
        """A large upload: stored as sent and imported by a worker; 202 with the import."""
        with transaction.atomic():
            job = imports.stage(
                dataset, source, filename, mapping, message, signed_in_user(self.request)
            )
            self.audit(
                "dataset.import", job, dataset.project, dataset=dataset.name, size=job.size_bytes
            )
            transaction.on_commit(lambda: imports.enqueue(job.pk))
        return Response(DatasetImportSerializer(job).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(
        parameters=[VERSION_NUMBER, PreviewQuerySerializer],
        responses={200: PreviewSerializer, 422: UNREADABLE_VERSION},
    )
    @action(detail=True, methods=["get"])
    def preview(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """A page of rows as stored. `limit` is clamped to 100; `offset` must be >= 0. The
        page holds at most RLSTUDIO_PREVIEW_MAX_BYTES (4 MiB): a longer one is cut
        (`truncated`, `next_offset`)."""
        version = self.get_object()
        query = PreviewQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        offset = query.validated_data["offset"]
        limit = min(query.validated_data["limit"], PREVIEW_MAX_LIMIT)
        page = read_page(version, offset, limit, page_max_bytes())
        body = {
            "offset": offset,
            "limit": limit,
            "total": version.row_count,
            "columns": [column["name"] for column in version.columns],
            "rows": page.rows,
            "truncated": page.truncated,
            "message": page.message,
            "next_offset": page.next_offset,
        }
        return Response(body)

    @extend_schema(
        parameters=[VERSION_NUMBER],
        responses={
            (200, "application/octet-stream"): OpenApiResponse(
                response=OpenApiTypes.BINARY, description="The version's parquet file."
            ),
            422: UNREADABLE_VERSION,
        },
    )
    @action(detail=True, methods=["get"], renderer_classes=[renderers.JSONRenderer, BinaryRenderer])
    def download(self, request: Request, *args: Any, **kwargs: Any) -> FileResponse:
        """The version's normalised parquet file, streamed."""
        version = self.get_object()
        # The response is the stored file, no larger than it was uploaded; what it decodes
        # to is the version's, within the import bounds, or the download is refused.
        check_readable(version)
        response = FileResponse(
            version.file.open("rb"),
            as_attachment=True,
            filename=f"{version.dataset.name}-v{version.number}.parquet",
            content_type="application/octet-stream",
        )
        response["X-Checksum-SHA256"] = version.checksum
        return response


def _on_disk(upload: UploadedFile, staging: Path) -> Path:
    """The upload's path on disk (streamed uploads already are; others are written)."""
    temporary_path = getattr(upload, "temporary_file_path", None)
    if temporary_path is not None:
        return Path(temporary_path())
    target = staging / "raw-upload"
    with target.open("wb") as handle:
        for chunk in upload.chunks():
            handle.write(chunk)
    return target

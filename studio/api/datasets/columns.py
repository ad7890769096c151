"""The columns of a file before it is uploaded, from a sample of it, so the browser can
offer them for the prompt/answer mapping. Any signed-in user; nothing is stored."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from django.http import HttpRequest
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from studio.datasets.column_serializers import ColumnSampleSerializer, DetectedColumnsSerializer
from studio.datasets.columns import SAMPLE_MAX_BYTES, detect_columns
from studio.datasets.sniff import UploadError
from studio.datasets.uploads import LimitedTemporaryFileUploadHandler, check_content_length

# The sample plus the multipart envelope (boundaries, headers, the other field).
BODY_MAX_BYTES = SAMPLE_MAX_BYTES + 16 * 1024


class DatasetColumnsView(APIView):
    permission_classes = [IsAuthenticated]
    parser_classes = [MultiPartParser]

    def initialize_request(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Request:
        drf_request = super().initialize_request(request, *args, **kwargs)
        request.upload_handlers = [LimitedTemporaryFileUploadHandler(request, BODY_MAX_BYTES)]
        return drf_request

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        check_content_length(request._request, BODY_MAX_BYTES)  # 413 before reading it
        super().initial(request, *args, **kwargs)

    @extend_schema(
        request={"multipart/form-data": ColumnSampleSerializer},
        responses={
            200: DetectedColumnsSerializer,
            413: OpenApiResponse(description="The sample is larger than 1 MiB."),
        },
    )
    def post(self, request: Request) -> Response:
        """Detect the columns of a CSV, JSONL or parquet file from a sample of it, and
        suggest the prompt and answer columns."""
        data = ColumnSampleSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        filename = Path(upload.name or "sample").name
        try:
            if upload.size > SAMPLE_MAX_BYTES:
                raise UploadError(
                    f"{filename}: the sample is {upload.size} bytes; send at most "
                    f"{SAMPLE_MAX_BYTES} bytes (the start of the file, or a parquet file's end)"
                )
            sample = upload.read()
            detected = detect_columns(sample, filename, data.validated_data["truncated"])
        except UploadError as exc:
            raise exceptions.ValidationError({"file": [str(exc)]}) from None
        finally:
            upload.close()
        return Response(asdict(detected))

"""The trainer's endpoints, authenticated by the attempt's ingest token (docs/telemetry.md):
upload records, and download the run's dataset."""

from __future__ import annotations

import io
import json
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from django.http import FileResponse, HttpResponse
from django.http.response import HttpResponseBase
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, parsers, permissions, renderers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from studio.api.datasets import BinaryRenderer
from studio.datasets.models import DatasetVersion
from studio.datasets.splits import VALIDATION_SPLITS, is_validation
from studio.runs.models import IngestToken
from studio.runs.tokens import IngestTokenAuthentication
from studio.telemetry.openapi import IngestModelExtension  # noqa: F401  (registers the schema)
from studio.telemetry.record_store import store_batch
from studio.telemetry.records import (
    MAX_BODY_BYTES,
    IngestBatch,
    IngestResult,
    InvalidBatch,
    parse_batch,
)

# extra_info.split labels that mean "held out" (verl writes "test"); other labels, and
# rows without one, are training rows.
RUN_ID = OpenApiParameter("run_id", int, OpenApiParameter.PATH, description="The run's id.")


class BatchTooLarge(exceptions.APIException):
    status_code = 413
    default_code = "too_large"
    default_detail = f"The request body is larger than {MAX_BODY_BYTES} bytes; send fewer records."


class IngestTokenForThisRun(permissions.BasePermission):
    """The token's run must be the run in the URL (another run's token: 403)."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        token = request.auth
        if not isinstance(token, IngestToken):
            return False  # no ingest token: 401 (the authenticator names the scheme)
        if str(token.run_id) != str(view.kwargs["run_id"]):
            raise exceptions.PermissionDenied(
                f"This ingest token is for run {token.run_id}, not run {view.kwargs['run_id']}."
            )
        return True


class _IngestView(APIView):
    authentication_classes = [IngestTokenAuthentication]
    permission_classes = [IngestTokenForThisRun]

    @property
    def token(self) -> IngestToken:
        token = self.request.auth
        assert isinstance(token, IngestToken)  # IngestTokenForThisRun let it through
        return token


class IngestRecordsView(_IngestView):
    # Declared for the schema only: `post` reads the raw body (bounded) and validates it
    # with pydantic, so DRF's parser never runs.
    parser_classes = [parsers.JSONParser]

    @extend_schema(
        parameters=[RUN_ID],
        request=IngestBatch,
        responses={
            200: IngestResult,
            400: OpenApiResponse(description="A record is invalid; nothing was stored."),
            403: OpenApiResponse(description="The token is for another run or attempt."),
            413: OpenApiResponse(description="The body is larger than 8 MiB."),
        },
    )
    def post(self, request: Request, run_id: int) -> Response:
        """Store a batch of the trainer's records (at most 2,000, 8 MiB). Idempotent:
        records already stored under their (attempt, seq) are skipped."""
        declared = request.META.get("CONTENT_LENGTH") or ""
        if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
            raise BatchTooLarge()
        body = request._request.read(MAX_BODY_BYTES + 1)
        if len(body) > MAX_BODY_BYTES:
            raise BatchTooLarge()
        try:
            batch = parse_batch(body)
        except InvalidBatch as exc:
            raise exceptions.ValidationError({exc.field: [exc.message]}) from None
        token = self.token
        if batch.attempt != token.attempt.number:
            raise exceptions.PermissionDenied(
                f"This ingest token is for attempt {token.attempt.number}; "
                f"the batch says attempt {batch.attempt}."
            )
        outcome = store_batch(token.run, token.attempt, batch)
        return Response(
            {
                "stored": outcome.stored,
                "duplicates": outcome.duplicates,
                "last_seq": outcome.last_seq,
            }
        )


class IngestDatasetView(_IngestView):
    renderer_classes = [renderers.JSONRenderer, BinaryRenderer]

    @extend_schema(
        parameters=[
            RUN_ID,
            OpenApiParameter(
                "split",
                str,
                enum=["train", "val"],
                default="train",
                description="`val`: rows whose extra_info.split is val, validation, test or "
                "dev; `train`: the others.",
            ),
        ],
        responses={
            (200, "application/octet-stream"): OpenApiResponse(
                response=OpenApiTypes.BINARY, description="The rows, as a parquet file."
            ),
            404: OpenApiResponse(description="The run has no dataset, or no rows in the split."),
        },
    )
    def get(self, request: Request, run_id: int) -> HttpResponseBase:
        """The run's dataset version as parquet, for trainers without a shared filesystem."""
        split = request.query_params.get("split", "train")
        if split not in ("train", "val"):
            raise exceptions.ValidationError({"split": [f"{split[:20]!r} is not train or val."]})
        version = self.token.run.dataset_version
        if version is None:
            raise exceptions.NotFound("This run has no dataset version.")
        return _split_file(version, split)


def _split_file(version: DatasetVersion, split: str) -> HttpResponseBase:
    name = f"{version.dataset.name}-v{version.number}-{split}.parquet"
    unlabelled = not version.stats.get("splits")
    if unlabelled and split == "train":  # no split labels: every row trains
        response = FileResponse(
            version.file.open("rb"), filename=name, content_type="application/octet-stream"
        )
        response["X-Checksum-SHA256"] = version.checksum
        return response
    with version.file.open("rb") as handle:
        table = pq.read_table(handle)
    labels = [_split_label(info) for info in _column(table, "extra_info")]
    keep = [is_validation(label) == (split == "val") for label in labels]
    if not any(keep):
        raise exceptions.NotFound(
            f"Dataset {version.dataset.name} v{version.number} has no {split} rows "
            f"(held-out rows have extra_info.split in {sorted(VALIDATION_SPLITS)})."
        )
    buffer = io.BytesIO()
    pq.write_table(table.filter(pa.array(keep)), buffer)
    return HttpResponse(
        buffer.getvalue(),
        content_type="application/octet-stream",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


def _column(table: pa.Table, name: str) -> list[Any]:
    if name not in table.column_names:
        return [None] * table.num_rows
    return list(table.column(name).to_pylist())


def _split_label(extra_info: Any) -> str | None:
    if isinstance(extra_info, str):  # some writers store it as a JSON string
        try:
            extra_info = json.loads(extra_info)
        except ValueError:
            return None
    if isinstance(extra_info, dict):
        label = extra_info.get("split")
        return label.lower() if isinstance(label, str) else None
    if isinstance(extra_info, list):  # a parquet map arrives as (key, value) pairs
        return _split_label(dict(item for item in extra_info if len(item) == 2))
    return None

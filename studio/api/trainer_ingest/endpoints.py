"""The trainer's endpoints, authenticated by the attempt's ingest token (docs/telemetry.md):
upload records, and download the run's dataset."""

from __future__ import annotations

import io
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from django.http import FileResponse, HttpResponse
from django.http.response import HttpResponseBase
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, parsers, permissions, renderers, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from studio.api.common.errors import Conflict
from studio.api.datasets.datasets import BinaryRenderer
from studio.datasets.heldout import held_out_mask
from studio.datasets.models import DatasetVersion
from studio.datasets.stored import check_readable
from studio.runs.bootstrap import redeem
from studio.runs.launch import LaunchRefused, trainer_launch
from studio.runs.models import IngestToken, Run
from studio.runs.tokens import IngestTokenAuthentication, issue_ingest_token
from studio.telemetry.ingest.openapi import IngestModelExtension  # noqa: F401  (registers the schema)
from studio.telemetry.ingest.record_store import store_batch
from studio.telemetry.ingest.records import (
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


class BootstrapRequestSerializer(serializers.Serializer[dict[str, Any]]):
    attempt = serializers.IntegerField(min_value=1, max_value=2**31 - 1)


class BootstrapSerializer(serializers.Serializer[dict[str, Any]]):
    token = serializers.CharField(help_text="The attempt's ingest token (Bearer, from now on).")
    config = serializers.DictField(help_text="The run config, paths resolved for this launch.")
    reward_code = serializers.CharField(
        allow_null=True, help_text="The reward version's code; null for a built-in reward."
    )


class IngestBootstrapView(APIView):
    """Redeem a job's one-time secret (`Authorization: Bootstrap rlb_...`) for its
    ingest token, config and reward code (studio.runs.bootstrap)."""

    authentication_classes: list[Any] = []
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        parameters=[RUN_ID],
        request=BootstrapRequestSerializer,
        responses={
            200: BootstrapSerializer,
            403: OpenApiResponse(description="Unknown secret, or already used."),
            409: OpenApiResponse(description="The run can't be launched as stored."),
        },
    )
    def post(self, request: Request, run_id: int) -> Response:
        data = BootstrapRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        scheme, _, raw = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
        attempt = (
            redeem(run_id, data.validated_data["attempt"], raw.strip())
            if scheme == "Bootstrap"
            else None
        )
        if attempt is None:
            raise exceptions.PermissionDenied(
                "This bootstrap secret is unknown, was already used, or its run has ended."
            )
        run = attempt.run
        try:
            # The reward code is the one the stored config's reward reference names.
            launched = trainer_launch(run, attempt)
        except LaunchRefused as exc:
            raise Conflict(str(exc)) from exc
        return Response(
            {
                "token": issue_ingest_token(attempt),
                "config": launched.config,
                "reward_code": launched.reward_code,
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
                description="`train`: the rows the run trains on; `val`: the rows it "
                "validates on (held-out rows of its version, another version, by its "
                "validation choice).",
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
        return run_split(self.token.run, split)


def _rows_file(version: DatasetVersion, split: str, keep: list[bool] | None) -> HttpResponseBase:
    """The version's rows as parquet: all of them (`keep` None), or those marked."""
    name = f"{version.dataset.name}-v{version.number}-{split}.parquet"
    if keep is None:
        response = FileResponse(
            version.file.open("rb"), filename=name, content_type="application/octet-stream"
        )
        response["X-Checksum-SHA256"] = version.checksum
        return response
    with version.file.open("rb") as handle:
        table = pq.read_table(handle)
    if len(keep) != table.num_rows or not any(keep):
        raise exceptions.NotFound(
            f"Dataset {version.dataset.name} v{version.number} has no {split} rows."
        )
    buffer = io.BytesIO()
    pq.write_table(table.filter(pa.array(keep)), buffer)
    return HttpResponse(
        buffer.getvalue(),
        content_type="application/octet-stream",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


def _held_out(version: DatasetVersion) -> list[bool]:
    with version.file.open("rb") as handle:
        return held_out_mask(pq.read_table(handle))


def run_split(run: Run, split: str) -> HttpResponseBase:
    """What the run trains on (`train`) or validates on (`val`), by its validation choice."""
    version = run.dataset_version
    if version is None:
        raise exceptions.NotFound("This run has no dataset version.")
    check_readable(version)  # 422 for a version over the import bounds, before reading it
    if split == "train":
        if run.validation != "held_out":
            return _rows_file(version, split, None)
        return _rows_file(version, split, [not held for held in _held_out(version)])
    if run.validation == "held_out":
        return _rows_file(version, split, _held_out(version))
    if run.validation == "dataset_version" and run.validation_version is not None:
        check_readable(run.validation_version)
        return _rows_file(run.validation_version, split, None)
    raise exceptions.NotFound("This run validates on nothing.")

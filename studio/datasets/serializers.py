"""Serializers of the datasets API (requests and responses, typed for the schema)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from studio.datasets.models import Dataset, DatasetImport, DatasetVersion
from studio.projects.serializers import (
    RESOURCE_FIELDS,
    ProjectResourceCreateSerializer,
    ProjectResourceSerializer,
    ProjectResourceUpdateSerializer,
)

PREVIEW_MAX_LIMIT = 100
PREVIEW_DEFAULT_LIMIT = 20


class BinSerializer(serializers.Serializer):
    start = serializers.FloatField()
    end = serializers.FloatField()
    count = serializers.IntegerField()


class LengthStatsSerializer(serializers.Serializer):
    min = serializers.IntegerField()
    max = serializers.IntegerField()
    mean = serializers.FloatField()
    p50 = serializers.FloatField()
    p95 = serializers.FloatField()
    histogram = BinSerializer(many=True)


class NamedCountSerializer(serializers.Serializer):
    name = serializers.CharField()
    count = serializers.IntegerField()


class SourceFileSerializer(serializers.Serializer):
    filename = serializers.CharField(help_text="The uploaded file's name.")
    size_bytes = serializers.IntegerField(help_text="Size of the uploaded file.")
    sha256 = serializers.CharField(help_text="Checksum of the uploaded file as sent.")


class DatasetStatsSerializer(serializers.Serializer):
    prompt_chars = LengthStatsSerializer(help_text="Prompt lengths in characters.")
    data_sources = NamedCountSerializer(many=True, help_text="Rows per data_source.")
    splits = NamedCountSerializer(many=True, help_text="Rows per extra_info.split.")
    rows_without_split = serializers.IntegerField()
    upload = SourceFileSerializer(help_text="The file as uploaded.")


class ColumnSerializer(serializers.Serializer):
    name = serializers.CharField()
    type = serializers.CharField(help_text="Arrow type of the column in the stored parquet.")


class ColumnMappingSerializer(serializers.Serializer):
    prompt_key = serializers.CharField(help_text="Column holding the prompt.")
    answer_key = serializers.CharField(help_text="Answer column of prompt_answer data.")
    data_source = serializers.CharField(help_text="data_source of rows that have none.")


class DatasetVersionSerializer(serializers.ModelSerializer):
    created_by = serializers.CharField(source="created_by.username", read_only=True)
    column_mapping = ColumnMappingSerializer(
        read_only=True,
        help_text="With `data_format`, the trainer's data config needed to read the file.",
    )
    columns = ColumnSerializer(many=True, read_only=True)
    stats = DatasetStatsSerializer(read_only=True)
    download_url = serializers.SerializerMethodField()

    class Meta:
        model = DatasetVersion
        fields = [
            "id",
            "dataset",
            "number",
            "source_format",
            "data_format",
            "column_mapping",
            "size_bytes",
            "checksum",
            "row_count",
            "columns",
            "stats",
            "message",
            "created_by",
            "created_at",
            "download_url",
        ]
        read_only_fields = fields

    def get_download_url(self, version: DatasetVersion) -> str:
        return f"/api/datasets/{version.dataset_id}/versions/{version.number}/download/"


class DatasetImportSerializer(serializers.ModelSerializer):
    """A large upload being imported in the background."""

    version_number = serializers.IntegerField(
        source="version.number", default=None, read_only=True, help_text="Once it succeeded."
    )

    class Meta:
        model = DatasetImport
        fields = [
            "id",
            "dataset",
            "status",
            "filename",
            "size_bytes",
            "message",
            "error",
            "version_number",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields


RECENT_IMPORTS = 5


class DatasetSerializer(ProjectResourceSerializer):
    class Meta:
        model = Dataset
        fields = [*RESOURCE_FIELDS, "imports"]
        read_only_fields = fields

    imports = serializers.SerializerMethodField(
        help_text=f"The {RECENT_IMPORTS} latest background imports of large uploads, newest "
        "first: queued, running, succeeded (with the version made) or failed (with why)."
    )

    @extend_schema_field(DatasetImportSerializer(many=True))
    def get_imports(self, dataset: Dataset) -> list[dict[str, Any]]:
        recent = dataset.imports.select_related("version").order_by("-created_at", "-id")
        return list(DatasetImportSerializer(recent[:RECENT_IMPORTS], many=True).data)

    @extend_schema_field(DatasetVersionSerializer(allow_null=True))
    def get_latest_version(self, dataset: Dataset) -> dict[str, Any] | None:
        version = self.latest_version_of(dataset)
        return DatasetVersionSerializer(version).data if version else None


class DatasetCreateSerializer(ProjectResourceCreateSerializer):
    noun = "dataset"
    model = Dataset


class DatasetUpdateSerializer(ProjectResourceUpdateSerializer):
    noun = "dataset"


class DatasetUploadSerializer(serializers.Serializer):
    file = serializers.FileField(
        allow_empty_file=True,  # refused by the checks, with the file's name in the message
        help_text="Parquet (.parquet), JSON lines (.jsonl/.json) or CSV (.csv), UTF-8 text.",
    )
    message = serializers.CharField(max_length=300, required=False, allow_blank=True, default="")
    format = serializers.ChoiceField(
        choices=["auto", "verl", "prompt_answer"],
        default="auto",
        help_text="`verl`: data_source, prompt (chat messages), reward_model.ground_truth, "
        "extra_info. `prompt_answer`: a prompt column and an answer column named by "
        "prompt_key/answer_key. `auto` picks by the columns present.",
    )
    prompt_key = serializers.CharField(max_length=100, default="prompt")
    answer_key = serializers.CharField(max_length=100, default="answer")
    data_source = serializers.CharField(
        max_length=100, default="default", help_text="data_source for rows without one."
    )


class PreviewQuerySerializer(serializers.Serializer):
    offset = serializers.IntegerField(min_value=0, default=0, help_text="First row (0-based).")
    limit = serializers.IntegerField(
        min_value=1,
        default=PREVIEW_DEFAULT_LIMIT,
        help_text=f"Rows to return; larger values are clamped to {PREVIEW_MAX_LIMIT}.",
    )


class PreviewSerializer(serializers.Serializer):
    offset = serializers.IntegerField()
    limit = serializers.IntegerField(help_text="The limit applied (after clamping).")
    total = serializers.IntegerField(help_text="Rows in the version.")
    columns = serializers.ListField(child=serializers.CharField())
    rows = serializers.ListField(child=serializers.DictField())
    truncated = serializers.BooleanField(
        help_text="The page was cut short of `limit` rows: the next row would have taken "
        "it past RLSTUDIO_PREVIEW_MAX_BYTES. Ask for `next_offset` for the rest."
    )
    message = serializers.CharField(help_text="Why the page was cut (empty when it was not).")
    next_offset = serializers.IntegerField(help_text="Where the next page starts.")

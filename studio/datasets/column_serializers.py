"""Serializers of the column detection of a file before its upload (studio.api.datasets.columns)."""

from __future__ import annotations

from rest_framework import serializers

from studio.datasets.columns import SAMPLE_MAX_BYTES


class ColumnSampleSerializer(serializers.Serializer):
    file = serializers.FileField(
        allow_empty_file=True,  # refused with the file's name in the message
        help_text=f"The first bytes of a CSV/JSONL file, or the last bytes of a parquet file "
        f"(its footer), at most {SAMPLE_MAX_BYTES} bytes; named like the file.",
    )
    truncated = serializers.BooleanField(
        default=False, help_text="The file goes on past the sample (a partial line is dropped)."
    )


class DetectedColumnsSerializer(serializers.Serializer):
    source_format = serializers.ChoiceField(choices=["parquet", "jsonl", "csv"])
    columns = serializers.ListField(child=serializers.CharField(), help_text="In file order.")
    examples = serializers.ListField(
        child=serializers.DictField(child=serializers.CharField()),
        help_text="The first rows (CSV/JSONL), values shortened to 200 characters.",
    )
    data_format = serializers.ChoiceField(
        choices=["verl", "prompt_answer"], help_text="What the columns look like."
    )
    prompt_key = serializers.CharField(allow_blank=True, help_text="Suggested prompt column.")
    answer_key = serializers.CharField(
        allow_blank=True, help_text="Suggested answer column (prompt_answer data)."
    )

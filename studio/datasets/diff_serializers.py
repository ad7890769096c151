"""Serializers of a dataset version diff (studio.api.datasets.diff)."""

from __future__ import annotations

from rest_framework import serializers

from studio.datasets.diff import PAGE_MAX, ROW_CHANGES


class DiffQuerySerializer(serializers.Serializer):
    # `from` is a Python keyword: the view reads it into `from_number` (see below).
    from_number = serializers.IntegerField(
        min_value=1, required=False, help_text="The older version (default: the one before `to`)."
    )
    to = serializers.IntegerField(
        min_value=1, required=False, help_text="The newer version (default: the newest)."
    )
    change = serializers.ChoiceField(
        choices=list(ROW_CHANGES), required=False, help_text="Only rows changed this way."
    )
    offset = serializers.IntegerField(min_value=0, default=0)
    limit = serializers.IntegerField(
        min_value=1, default=50, help_text=f"Rows per page, at most {PAGE_MAX}."
    )


class ColumnChangeSerializer(serializers.Serializer):
    name = serializers.CharField()
    change = serializers.ChoiceField(choices=["added", "removed", "type_changed"])
    before = serializers.CharField(allow_null=True, help_text="Its type in `from` (null: absent).")
    after = serializers.CharField(allow_null=True, help_text="Its type in `to` (null: absent).")


class RowChangeSerializer(serializers.Serializer):
    key = serializers.CharField(
        help_text="How the row was matched: `index N` (extra_info.index) or `prompt <hash>`."
    )
    change = serializers.ChoiceField(choices=list(ROW_CHANGES))
    before = serializers.DictField(allow_null=True, help_text="The row in `from` (null: added).")
    after = serializers.DictField(allow_null=True, help_text="The row in `to` (null: removed).")
    columns = serializers.ListField(
        child=serializers.CharField(), help_text="Columns whose values differ (changed rows)."
    )


class DiffCountsSerializer(serializers.Serializer):
    added = serializers.IntegerField()
    removed = serializers.IntegerField()
    changed = serializers.IntegerField()
    unchanged = serializers.IntegerField()


class DatasetDiffSerializer(serializers.Serializer):
    from_number = serializers.IntegerField()
    to_number = serializers.IntegerField()
    columns = ColumnChangeSerializer(many=True)
    counts = DiffCountsSerializer()
    total = serializers.IntegerField(help_text="Rows of the asked kind of change, all pages.")
    offset = serializers.IntegerField()
    limit = serializers.IntegerField()
    rows = RowChangeSerializer(many=True)
    truncated = serializers.BooleanField(
        help_text="The page was cut short of `limit` changes: the next would have taken it "
        "past RLSTUDIO_PREVIEW_MAX_BYTES. Ask for `next_offset` for the rest."
    )
    message = serializers.CharField(help_text="Why the page was cut (empty when it was not).")
    next_offset = serializers.IntegerField(help_text="Where the next page starts.")

"""Serializers of a run's log lines and checkpoints (studio/api/runs/details.py)."""

from __future__ import annotations

from typing import Any, cast

from django.urls import reverse
from rest_framework import serializers

from studio.runs.checkpoints import CheckpointLocation, locate_checkpoint
from studio.runs.models import Checkpoint
from studio.telemetry.models import LogLine

# Standard logging levels, lowest first; the trainer sends them in any case.
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
LEVEL_ALIASES = {"WARN": "WARNING", "FATAL": "CRITICAL"}


def levels_from(level: str) -> list[str]:
    """`level` and every level above it, upper-case (aliases included)."""
    at = LOG_LEVELS.index(level)
    kept = list(LOG_LEVELS[at:])
    return kept + [alias for alias, name in LEVEL_ALIASES.items() if name in kept]


class LogQuerySerializer(serializers.Serializer):
    level = serializers.CharField(
        max_length=16,
        required=False,
        help_text="Only lines at this level or above: one of "
        f"{', '.join(LOG_LEVELS)} (any case; WARN and FATAL too). Default: every line.",
    )
    attempt = serializers.IntegerField(
        min_value=1, max_value=2**31 - 1, required=False, help_text="Only this attempt's lines."
    )
    after_attempt = serializers.IntegerField(
        min_value=1,
        max_value=2**31 - 1,
        default=1,
        help_text="With after_seq: lines after (after_attempt, after_seq), as an SSE id.",
    )
    after_seq = serializers.IntegerField(
        min_value=-1,
        max_value=2**63 - 1,
        required=False,
        help_text="Only lines after this seq of after_attempt (and of later attempts).",
    )

    def validate_level(self, value: str) -> str:
        level = value.strip().upper()
        level = LEVEL_ALIASES.get(level, level)
        if level not in LOG_LEVELS:
            raise serializers.ValidationError(
                f"{value!r:.40} is not a log level; use one of {', '.join(LOG_LEVELS)}."
            )
        return level


class LogLineSerializer(serializers.ModelSerializer):
    class Meta:
        model = LogLine
        fields = ["id", "attempt", "seq", "level", "message", "at"]
        read_only_fields = fields


class CheckpointSerializer(serializers.ModelSerializer):
    size_bytes = serializers.SerializerMethodField(
        help_text="Bytes of the checkpoint's files; null where the studio can't reach it."
    )
    reachable = serializers.SerializerMethodField(
        help_text="Whether this studio can serve the checkpoint (download_url is set)."
    )
    unreachable_reason = serializers.SerializerMethodField(
        help_text='Why not, and the setting that would fix it ("" when reachable).'
    )
    download_url = serializers.SerializerMethodField(
        help_text="Streams the checkpoint folder as a .tar; null when unreachable."
    )

    class Meta:
        model = Checkpoint
        fields = [
            "id",
            "attempt",
            "step",
            "uri",
            "size_bytes",
            "created_at",
            "reachable",
            "unreachable_reason",
            "download_url",
        ]
        read_only_fields = fields

    def _location(self, checkpoint: Checkpoint) -> CheckpointLocation:
        # Each field asks; the filesystem is looked at once per checkpoint.
        context = cast(dict[str, Any], self.context)  # the root's own dict
        found: dict[int, CheckpointLocation] = context.setdefault("_locations", {})
        if checkpoint.pk not in found:
            found[checkpoint.pk] = locate_checkpoint(checkpoint)
        return found[checkpoint.pk]

    def get_size_bytes(self, checkpoint: Checkpoint) -> int | None:
        return self._location(checkpoint).size_bytes

    def get_reachable(self, checkpoint: Checkpoint) -> bool:
        return self._location(checkpoint).reachable

    def get_unreachable_reason(self, checkpoint: Checkpoint) -> str:
        return self._location(checkpoint).reason

    def get_download_url(self, checkpoint: Checkpoint) -> str | None:
        if not self._location(checkpoint).reachable:
            return None
        return reverse(
            "run-checkpoint-download",
            kwargs={"pk": checkpoint.run_id, "checkpoint_id": checkpoint.pk},
        )

"""A run's inputs as every view shows them: what it trains, on what, scored by what; each
kind's entries and report rows come from its registry entry (studio.references.kinds)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework import serializers

from studio.references.ref_serializers import (
    DatasetRefSerializer,
    ModelRefSerializer,
    RewardModelRefSerializer,
    RewardRefSerializer,
)
from studio.references.registry import input_kinds, summary_fields
from studio.runs.models import Run

__all__ = [
    "SUMMARY_RELATED",
    "DatasetRefSerializer",
    "ModelRefSerializer",
    "RewardModelRefSerializer",
    "RewardRefSerializer",
    "RunInputsSerializer",
    "input_lines",
    "run_inputs",
]

# The queryset lookups the summary reads (list views select them together).
SUMMARY_RELATED = tuple(lookup for kind in input_kinds() for lookup in kind.related)


class RunInputsSerializer(serializers.Serializer[dict[str, Any]]):
    # Each kind's fields (in registry order), then the paths of a run from before references.
    legacy_paths = serializers.DictField(
        child=serializers.JSONField(),
        help_text="A run from before runs referenced resources: the paths its config names.",
    )

    def get_fields(self) -> dict[str, serializers.Field]:
        return {**summary_fields(), **super().get_fields()}


def _legacy_paths(run: Run) -> dict[str, Any]:
    """A run stored before runs referenced resources: the paths its config names."""
    if run.model is not None:
        return {}
    return {
        "model.path": run.config.get("model", {}).get("path"),
        "data.train_files": run.config.get("data", {}).get("train_files"),
        "data.val_files": run.config.get("data", {}).get("val_files"),
    }


def run_inputs(run: Run) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for kind in input_kinds():
        summary.update(kind.summary(run))
    summary["legacy_paths"] = _legacy_paths(run)
    return summary


def input_lines(summary: Mapping[str, Any], held_out: int | None = None) -> dict[str, str]:
    """A run's inputs as a report's rows; `held_out`: how many rows it holds out."""
    lines: dict[str, str] = {}
    for kind in input_kinds():
        lines.update(kind.report_lines(summary, held_out))
    return lines

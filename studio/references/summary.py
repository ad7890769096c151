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


class ProvenanceSerializer(serializers.Serializer[dict[str, Any]]):
    paths = serializers.DictField(
        child=serializers.JSONField(), help_text="Config place -> what the run's config named."
    )
    missing = serializers.ListField(
        child=serializers.CharField(), help_text="Why no resource stands for it, per place."
    )


class RunInputsSerializer(serializers.Serializer[dict[str, Any]]):
    # Each kind's fields (in registry order), then the provenance record, if any.
    provenance = ProvenanceSerializer(
        allow_null=True,
        help_text="A run from before runs referenced resources whose files are gone: what "
        "its config named; it is shown, never launched, resumed or cloned. null for others.",
    )

    def get_fields(self) -> dict[str, serializers.Field]:
        return {**summary_fields(), **super().get_fields()}


def run_inputs(run: Run) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for kind in input_kinds():
        summary.update(kind.summary(run))
    summary["provenance"] = run.provenance
    return summary


def input_lines(summary: Mapping[str, Any], held_out: int | None = None) -> dict[str, str]:
    """A run's inputs as a report's rows; `held_out`: how many rows it holds out."""
    lines: dict[str, str] = {}
    for kind in input_kinds():
        lines.update(kind.report_lines(summary, held_out))
    provenance = summary.get("provenance")
    if provenance:
        named = ", ".join(
            f"{place} {' '.join(map(str, value)) if isinstance(value, list) else value}"
            for place, value in provenance["paths"].items()
        )
        lines["Provenance"] = f"{named} ({'; '.join(provenance['missing'])}); not relaunchable"
    return lines

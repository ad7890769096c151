"""The serializer fields the input kinds declare: ids in requests, and how a referenced
model or dataset version is shown in a run's `inputs`."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from studio.model_registry.models import RegisteredModel
from studio.references.pickers import KindIdField, Picker


def id_field(help_text: str, picker: Picker | None = None) -> serializers.IntegerField:
    """An optional id of a request; with `picker`, the run form offers it with the generic
    picker the schema describes (studio.references.pickers)."""
    options: dict[str, Any] = {
        "required": False,
        "allow_null": True,
        "min_value": 1,
        "max_value": 2**63 - 1,
        "help_text": help_text,
    }
    return (
        serializers.IntegerField(**options)
        if picker is None
        else KindIdField(picker=picker, **options)
    )


class ModelRefSerializer(serializers.Serializer[dict[str, Any]]):
    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField(help_text="demo, server or checkpoint.")


class DatasetRefSerializer(serializers.Serializer[dict[str, Any]]):
    dataset = serializers.IntegerField(help_text="The dataset's id.")
    name = serializers.CharField()
    version = serializers.IntegerField(help_text="The version's id.")
    number = serializers.IntegerField(help_text="The version's number (vN).")
    rows = serializers.IntegerField()


class RewardRefSerializer(serializers.Serializer[dict[str, Any]]):
    function = serializers.IntegerField(allow_null=True, help_text="null for a built-in.")
    name = serializers.CharField(help_text="The function's name, or the built-in's.")
    version = serializers.IntegerField(allow_null=True)
    number = serializers.IntegerField(allow_null=True)
    kwargs = serializers.DictField(
        child=serializers.JSONField(),
        help_text="The keyword arguments it is called with (`reward.kwargs`); empty: none.",
    )


class RewardModelRefSerializer(ModelRefSerializer):
    place = serializers.CharField(help_text='Its config place, e.g. "reward.model.path".')


def dataset_ref(version: Any) -> dict[str, Any] | None:
    if version is None:
        return None
    return {
        "dataset": version.dataset_id,
        "name": version.dataset.name,
        "version": version.pk,
        "number": version.number,
        "rows": version.row_count,
    }


def dataset_line(ref: dict[str, Any] | None) -> str:
    return f"{ref['name']} v{ref['number']} ({ref['rows']} rows)" if ref else "none"


def model_ref(model: RegisteredModel) -> dict[str, Any]:
    return {"id": model.pk, "name": model.name, "kind": model.kind}

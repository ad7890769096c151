"""A run's inputs as every view shows them: what it trains, on what, scored by what."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from studio.datasets.models import DatasetVersion
from studio.model_registry.models import RegisteredModel
from studio.runs.models import Run
from trainer.rewards.resolution import scorer_for

# The queryset lookups the summary reads (list views select them together).
SUMMARY_RELATED = (
    "model",
    "dataset_version__dataset",
    "validation_version__dataset",
    "reward_version__function",
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


class RunInputsSerializer(serializers.Serializer[dict[str, Any]]):
    model = ModelRefSerializer(allow_null=True, help_text="null: a run from before models.")
    dataset = DatasetRefSerializer(allow_null=True)
    validation = serializers.CharField(
        help_text="held_out, dataset_version, none, or config (a run from before "
        "validation was a choice: its config's files)."
    )
    validation_dataset = DatasetRefSerializer(
        allow_null=True, help_text="The version validated on (the training version when held out)."
    )
    reward = RewardRefSerializer()
    reward_models = RewardModelRefSerializer(many=True)
    legacy_paths = serializers.DictField(
        child=serializers.JSONField(),
        help_text="A run from before runs referenced resources: the paths its config names.",
    )


def _dataset(version: Any) -> dict[str, Any] | None:
    if version is None:
        return None
    return {
        "dataset": version.dataset_id,
        "name": version.dataset.name,
        "version": version.pk,
        "number": version.number,
        "rows": version.row_count,
    }


def _model(model: RegisteredModel) -> dict[str, Any]:
    return {"id": model.pk, "name": model.name, "kind": model.kind}


def _by_data_source(version: DatasetVersion | None) -> str:
    """The built-in name of a run that chose no reward: its data sources' scorers."""
    sources = version.stats.get("data_sources", []) if version is not None else []
    names = sorted({scorer_for(str(s.get("name"))) or "none" for s in sources})
    return f"{' + '.join(names)} by data source" if names else "by data source"


def run_inputs(run: Run) -> dict[str, Any]:
    reward_fn = run.reward_version.function if run.reward_version else None
    reward_config = run.config.get("reward", {})
    builtin = reward_config.get("function") or _by_data_source(run.dataset_version)
    models = (
        {m.pk: m for m in RegisteredModel.objects.filter(pk__in=run.reward_models.values())}
        if run.reward_models
        else {}
    )
    legacy: dict[str, Any] = {}
    if run.model is None:
        legacy = {
            "model.path": run.config.get("model", {}).get("path"),
            "data.train_files": run.config.get("data", {}).get("train_files"),
            "data.val_files": run.config.get("data", {}).get("val_files"),
        }
    validation_version = (
        run.validation_version
        if run.validation == "dataset_version"
        else (run.dataset_version if run.validation == "held_out" else None)
    )
    return {
        "model": _model(run.model) if run.model else None,
        "dataset": _dataset(run.dataset_version),
        "validation": run.validation,
        "validation_dataset": _dataset(validation_version),
        "reward": {
            "function": reward_fn.pk if reward_fn else None,
            "name": reward_fn.name if reward_fn else builtin,
            "version": run.reward_version.pk if run.reward_version else None,
            "number": run.reward_version.number if run.reward_version else None,
            "kwargs": dict(reward_config.get("kwargs", {})),
        },
        "reward_models": [
            {**_model(models[pk]), "place": place}
            for place, pk in run.reward_models.items()
            if pk in models
        ],
        "legacy_paths": legacy,
    }

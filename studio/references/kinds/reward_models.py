"""The reward models a run scores with, by config place (`reward.model.path`,
`reward.extra_models.<i>.path`): models of the project with the reward role, each
`resource:model/<id>` (resolved as the trained model's, kinds.model)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rest_framework import serializers

from studio.model_registry.models import ModelRole, RegisteredModel
from studio.references.choices import default_model, one, project_models, usable
from studio.references.kinds.model import resolve_model
from studio.references.ref_serializers import RewardModelRefSerializer, model_ref
from studio.references.reference import Reference
from studio.references.registry import Choice, InputError, InputKind, RunInputs

if TYPE_CHECKING:
    from studio.runs.models import Run

RewardModels = dict[str, RegisteredModel]  # config place -> model


def reward_model_places(tree: dict[str, Any]) -> list[str]:
    """The reward-model path places a config tree has sections for."""
    places = ["reward.model.path"]
    extra = tree.get("reward", {}).get("extra_models", [])
    return places + [
        f"reward.extra_models.{i}.path" for i in range(len(extra) if isinstance(extra, list) else 0)
    ]


class RewardModelsInput(InputKind[RewardModels]):
    name = "reward_models"
    resource = "reward_model"
    resolvers = {"model": resolve_model}

    def request_fields(self) -> dict[str, serializers.Field]:
        return {
            "reward_models": serializers.DictField(
                child=serializers.IntegerField(min_value=1, max_value=2**63 - 1),
                required=False,
                allow_empty=True,
                help_text='Reward models by config place, e.g. {"reward.model.path": 4, '
                '"reward.extra_models.0.path": 5}; default: the preset\'s demo reward model, '
                "if any.",
            )
        }

    def choose(
        self, data: Mapping[str, Any], inherited: RewardModels | None, context: Choice
    ) -> RewardModels:
        """As requested ({} for none), else the clone's, else the preset's demo one."""
        project = context.project
        chosen: RewardModels = {}
        if data.get("reward_models") is not None:
            for place, pk in data["reward_models"].items():
                chosen[place] = one(
                    project_models(project), pk, f"reward_models.{place}", "model", project
                )
        elif inherited is not None:
            chosen = dict(inherited)
        else:
            for place, default in context.defaults.items():
                if place.startswith("reward.") and place.endswith(".path") and default:
                    chosen[place] = default_model(
                        project, default, f"reward_models.{place}", context.user
                    )
        for place, model in chosen.items():
            usable(model, f"reward_models.{place}", ModelRole.REWARD)
        return chosen

    def inherit(self, parent: Run) -> RewardModels | None:
        ids = parent.reward_models
        models = {m.pk: m for m in parent.project.models.filter(pk__in=ids.values())}
        return {place: models[pk] for place, pk in ids.items() if pk in models}

    def model_fields(self, value: RewardModels) -> dict[str, Any]:
        return {"reward_models": {place: model.pk for place, model in value.items()}}

    def references(
        self, value: RewardModels, inputs: RunInputs, tree: dict[str, Any]
    ) -> dict[str, Any]:
        places = reward_model_places(tree)
        unknown = set(value) - set(places)
        if unknown:
            raise InputError(
                {
                    "reward_models": [
                        f"No reward model section at {', '.join(sorted(unknown))} in the config."
                    ]
                }
            )
        return {
            place: Reference("model", value[place].pk).text if place in value else None
            for place in places
        }

    def summary_fields(self) -> dict[str, serializers.Field]:
        return {"reward_models": RewardModelRefSerializer(many=True)}

    def summary(self, run: Run) -> dict[str, Any]:
        ids = run.reward_models
        models = (
            {m.pk: m for m in RegisteredModel.objects.filter(pk__in=ids.values())} if ids else {}
        )
        return {
            "reward_models": [
                {**model_ref(models[pk]), "place": place}
                for place, pk in ids.items()
                if pk in models
            ]
        }

    def report_lines(self, summary: Mapping[str, Any], held_out: int | None) -> dict[str, str]:
        names = ", ".join(f"{m['name']} ({m['place']})" for m in summary["reward_models"])
        return {"Reward models": names or "none"}


KIND = RewardModelsInput()

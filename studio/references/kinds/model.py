"""The model a run trains (or an evaluation's first model): a model of the project with
the policy role, `resource:model/<id>` in `model.path`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rest_framework import serializers

from studio.model_registry.locations import model_folder
from studio.model_registry.models import ModelRole, RegisteredModel
from studio.references.choices import default_model, one, project_models, usable
from studio.references.ref_serializers import ModelRefSerializer, id_field, model_ref
from studio.references.reference import Reference
from studio.references.registry import Choice, InputKind, Launch, RunInputs, UnresolvedReference

if TYPE_CHECKING:
    from studio.runs.models import Run


def resolve_model(launch: Launch, reference: Reference) -> str:
    """A model of the run's project -> its folder (the trained model and reward models)."""
    model = (
        RegisteredModel.objects.filter(pk=reference.pk, project_id=launch.run.project_id).first()
        if reference.pk is not None
        else None
    )
    if model is None:
        raise UnresolvedReference(f"Model {reference.pk} is not a model of this run's project.")
    return str(model_folder(model))


class ModelInput(InputKind[RegisteredModel]):
    name = "model"
    resource = "model"
    related = ("model",)
    resolvers = {"model": resolve_model}

    def request_fields(self) -> dict[str, serializers.Field]:
        return {
            "model": id_field(
                "The model to train (/api/models/); default: the preset's demo model."
            )
        }

    def choose(
        self, data: Mapping[str, Any], inherited: RegisteredModel | None, context: Choice
    ) -> RegisteredModel:
        project = context.project
        if data.get("model") is not None:
            model = one(project_models(project), data["model"], "model", "model", project)
        elif inherited is not None:
            model = inherited
        else:
            model = default_model(
                project, context.defaults.get("model.path"), "model", context.user
            )
        return usable(model, "model", ModelRole.POLICY)

    def inherit(self, parent: Run) -> RegisteredModel | None:
        return parent.model

    def model_fields(self, value: RegisteredModel) -> dict[str, Any]:
        return {"model": value}

    def references(
        self, value: RegisteredModel, inputs: RunInputs, tree: dict[str, Any]
    ) -> dict[str, Any]:
        return {place: Reference("model", value.pk).text for place in self.places()}

    def summary_fields(self) -> dict[str, serializers.Field]:
        return {
            "model": ModelRefSerializer(
                allow_null=True,
                help_text="null: a provenance record whose model folder is gone (`provenance`).",
            )
        }

    def summary(self, run: Run) -> dict[str, Any]:
        return {"model": model_ref(run.model) if run.model else None}

    def report_lines(self, summary: Mapping[str, Any], held_out: int | None) -> dict[str, str]:
        model = summary["model"]
        if model is None:  # a provenance record: its Provenance row names the path
            return {"Model": "none recorded"}
        return {"Model": f"{model['name']} ({model['kind']})"}


KIND = ModelInput()

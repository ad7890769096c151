"""The model a run's critic starts from (verl's `critic.model.path`): a causal LM of the
project, `resource:model/<id>` in `critic.model.path`, resolved at launch as the trained
model's (kinds.model). Left out, the field is empty and the critic starts from the run's
model, as the trainer does with no critic model; choosing the run's own model is the same
thing and is stored so.

The stored reference is the whole record (no Run column). The choice applies to
estimators that train a critic (trainer.config.estimators, `needs_critic`): naming one for
another estimator is refused, and a clone that switches to such an estimator drops its
parent's.

The critic reads the actor's token ids, so its tokenizer must be the actor's: when both
models' folders have a tokenizer.json, the vocabularies recorded when they were added
(studio.model_registry.inspect.vocabulary_fingerprint) are compared here and a difference
is a 400; otherwise the trainer compares the tokenizers when it loads them
(trainer.models.loading.check_same_tokenizer) and the run fails with its message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rest_framework import serializers

from studio.model_registry.models import ModelRole, ModelStatus, RegisteredModel
from studio.references.choices import one, project_models, usable
from studio.references.pickers import Picker, Shown
from studio.references.ref_serializers import ModelRefSerializer, id_field, model_ref
from studio.references.reference import Reference
from studio.references.registry import Choice, InputError, InputKind, RunInputs
from trainer.config.estimators import ESTIMATOR_TRAITS
from trainer.config.schema import AlgorithmConfig

if TYPE_CHECKING:
    from studio.runs.models import Run

FIELD = "critic_model"
PLACE = "critic.model.path"


@dataclass(frozen=True)
class CriticChoice:
    """The critic's model (None: the run's model); `requested`: named by this request
    rather than inherited from a cloned run."""

    model: RegisteredModel | None
    requested: bool = False


def stored_critic(run: Run) -> RegisteredModel | None:
    """The critic model `run`'s stored config references (None: the run's own model)."""
    found = Reference.parse_or_none(run.config.get("critic", {}).get("model", {}).get("path"))
    if found is None or found.kind != "model" or found.pk in (None, run.model_id):
        return None
    return RegisteredModel.objects.filter(pk=found.pk, project_id=run.project_id).first()


def _estimator(tree: dict[str, Any]) -> str:
    default = AlgorithmConfig().adv_estimator
    return str(tree.get("algorithm", {}).get("adv_estimator", default))


PICKER = Picker(
    label="Critic model",
    help="The model the critic's body starts from, under a fresh value head; it must have the "
    "run's tokenizer.",
    list="/api/models/",
    where={"role": ModelRole.POLICY.value, "status": ModelStatus.READY.value},
    option="{name} ({kind})",
    unset="(the run's model)",
    shown=Shown(
        "algorithm.adv_estimator",
        among=tuple(str(e) for e, t in ESTIMATOR_TRAITS.items() if t.needs_critic),
    ),
)


class CriticModelInput(InputKind[CriticChoice]):
    name = "critic_model"
    resource = "critic_model"

    def request_fields(self) -> dict[str, serializers.Field]:
        return {
            FIELD: id_field(
                "The model the critic starts from (/api/models/; estimators with a critic, "
                "such as gae); it must have the run's tokenizer. Default: the run's model.",
                PICKER,
            )
        }

    def choose(
        self, data: Mapping[str, Any], inherited: CriticChoice | None, context: Choice
    ) -> CriticChoice:
        """The requested model, else the cloned run's; either checked against the model
        chosen for this run (a clone may change it)."""
        project = context.project
        if data.get(FIELD) is not None:
            model = one(project_models(project), data[FIELD], FIELD, "model", project)
            choice = CriticChoice(usable(model, FIELD, ModelRole.POLICY), requested=True)
        elif inherited is not None:
            choice = CriticChoice(inherited.model)
        else:
            return CriticChoice(None)
        actor = context.chosen.get("model")
        if choice.model is None or actor is None:
            return choice
        if choice.model.pk == actor.pk:
            return CriticChoice(None, choice.requested)  # the critic's default
        ours, theirs = actor.info.get("vocabulary"), choice.model.info.get("vocabulary")
        if ours and theirs and ours != theirs:
            raise InputError(
                {
                    FIELD: [
                        f"Model {choice.model.name!r} has another tokenizer vocabulary than "
                        f"the run's model {actor.name!r}: the critic reads the actor's token "
                        "ids, so it must start from a model with the same tokenizer."
                    ]
                }
            )
        return choice

    def inherit(self, parent: Run) -> CriticChoice | None:
        return CriticChoice(stored_critic(parent))

    def model_fields(self, value: CriticChoice) -> dict[str, Any]:
        return {}

    def references(
        self, value: CriticChoice, inputs: RunInputs, tree: dict[str, Any]
    ) -> dict[str, Any]:
        estimator = _estimator(tree)
        # An estimator the schema doesn't know is the config's error, reported by its check.
        traits = {str(name): t for name, t in ESTIMATOR_TRAITS.items()}.get(estimator)
        if value.model is not None and traits is not None and not traits.needs_critic:
            if value.requested:
                trains = [e for e, t in ESTIMATOR_TRAITS.items() if t.needs_critic]
                raise InputError(
                    {
                        FIELD: [
                            f"algorithm.adv_estimator={estimator!r} trains no critic; a "
                            f"critic model applies to {', '.join(trains)}."
                        ]
                    }
                )
            return {PLACE: None}  # a clone that left its parent's critic behind
        return {PLACE: Reference("model", value.model.pk).text if value.model else None}

    def summary_fields(self) -> dict[str, serializers.Field]:
        return {
            FIELD: ModelRefSerializer(
                allow_null=True,
                help_text="The model the critic starts from; null: the run's model (or no critic).",
            )
        }

    def summary(self, run: Run) -> dict[str, Any]:
        model = stored_critic(run)
        return {FIELD: model_ref(model) if model is not None else None}

    def report_lines(self, summary: Mapping[str, Any], held_out: int | None) -> dict[str, str]:
        model = summary[FIELD]  # every run has the row: a report's table lines runs up by it
        return {"Critic model": f"{model['name']} ({model['kind']})" if model else "the run's"}


KIND = CriticModelInput()

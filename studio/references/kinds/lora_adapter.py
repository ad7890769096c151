"""The saved LoRA adapter a run's actor starts from (verl's `lora_adapter_path`): a model
of the project with the adapter role, `resource:model/<id>` in `actor.lora.adapter_path`,
resolved at launch to its folder as any model (kinds.model).

How a project holds an adapter: as a model. A LoRA run with `actor.lora.export: adapter`
leaves peft's adapter folder (adapter_config.json + adapter_model.safetensors, beside its
tokenizer) as its final Hugging Face export; adding that run's checkpoint
(`POST /api/models/ {"checkpoint_run"}`) records it with the adapter role, as does a
folder under the server's model roots that holds one. A `merged` export is a plain model
(a run can start from it as its `model`), and a run's step checkpoints are the trainer's
own format, so neither is an adapter.

The adapter fixes the run's LoRA shape: chosen for a run whose config has LoRA off
(`actor.lora.rank` 0), it sets `actor.lora.rank`, `alpha` and `target_modules` to its own;
with LoRA on, a rank or alpha other than its own is a 400 naming both (the adapted modules
are compared by the trainer when it loads the adapter, trainer.models.lora.load_adapter).
An adapter from a run of the project was trained on that run's model; starting from it on
another model is a 400. An adapter from a server folder names its base model only as a
path of the machine that trained it, so that is left to the trainer's load.

The stored reference is the whole record (no Run column).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rest_framework import serializers

from studio.model_registry.models import ModelKind, ModelRole, ModelStatus, RegisteredModel
from studio.references.choices import one, project_models, usable
from studio.references.pickers import Picker, Shown
from studio.references.ref_serializers import ModelRefSerializer, id_field, model_ref
from studio.references.reference import Reference
from studio.references.registry import Choice, InputError, InputKind, RunInputs
from trainer.config.schema import LoraConfig

if TYPE_CHECKING:
    from studio.runs.models import Run

FIELD = "lora_adapter"
PLACE = "actor.lora.adapter_path"


@dataclass(frozen=True)
class AdapterChoice:
    """The adapter (None: fresh adapters); `requested`: named by this request rather than
    inherited from a cloned run."""

    model: RegisteredModel | None
    requested: bool = False


def stored_adapter(run: Run) -> RegisteredModel | None:
    lora = run.config.get("actor", {}).get("lora", {})
    found = Reference.parse_or_none(lora.get("adapter_path"))
    if found is None or found.kind != "model" or found.pk is None:
        return None
    return RegisteredModel.objects.filter(pk=found.pk, project_id=run.project_id).first()


def _refused(message: str) -> InputError:
    return InputError({FIELD: [message]})


def _base_check(adapter: RegisteredModel, model: RegisteredModel) -> None:
    if adapter.kind != ModelKind.CHECKPOINT or adapter.checkpoint is None:
        return
    base = adapter.checkpoint.run.model
    if base is not None and base.pk != model.pk:
        raise _refused(
            f"Adapter {adapter.name!r} was trained on model {base.name!r} (run "
            f"{adapter.checkpoint.run_id}); this run trains {model.name!r}. Choose that model "
            "or another adapter."
        )


def _settings(adapter: RegisteredModel, tree: dict[str, Any]) -> dict[str, Any]:
    """The LoRA settings the adapter implies for `tree`; InputError when they conflict."""
    saved = adapter.info.get("adapter") or {}
    rank, alpha = saved.get("r"), saved.get("lora_alpha")
    if not isinstance(rank, int) or rank < 1 or not isinstance(alpha, int | float):
        raise _refused(f"Adapter {adapter.name!r} records no LoRA rank and alpha.")
    lora = {**LoraConfig().model_dump(), **tree.get("actor", {}).get("lora", {})}
    if not isinstance(lora["rank"], int) or not isinstance(lora["alpha"], int | float):
        return {}  # not a number: the config's error, reported by its check
    if lora["rank"] == 0:  # LoRA off: the adapter's shape turns it on
        settings: dict[str, Any] = {"actor.lora.rank": rank, "actor.lora.alpha": float(alpha)}
        targets = saved.get("target_modules")
        if isinstance(targets, list) and targets:
            settings["actor.lora.target_modules"] = targets
        return settings
    if lora["rank"] != rank or float(lora["alpha"]) != float(alpha):
        raise _refused(
            f"Adapter {adapter.name!r} has rank {rank} and alpha {alpha}; the config has "
            f"actor.lora.rank={lora['rank']} and actor.lora.alpha={lora['alpha']}. Set them "
            "to the adapter's (or set actor.lora.rank to 0 and they follow the adapter)."
        )
    return {}


PICKER = Picker(
    label="LoRA adapter",
    help="A saved adapter of the project to start from (its rank and alpha must be actor.lora's).",
    list="/api/models/",
    where={"role": ModelRole.ADAPTER.value, "status": ModelStatus.READY.value},
    option="{name} ({kind})",
    unset="(fresh adapters)",
    none="No adapters in this project: add the checkpoint of a LoRA run with "
    "actor.lora.export: adapter on the Models page.",
    shown=Shown("actor.lora.rank", above=0),
)


class LoraAdapterInput(InputKind[AdapterChoice]):
    name = "lora_adapter"
    resource = "lora_adapter"

    def request_fields(self) -> dict[str, serializers.Field]:
        return {
            FIELD: id_field(
                "A saved LoRA adapter for the actor to start from (a model of the project with "
                "the adapter role, /api/models/?role=adapter); it sets actor.lora's rank, alpha "
                "and modules when LoRA is off. Default: fresh adapters.",
                PICKER,
            )
        }

    def choose(
        self, data: Mapping[str, Any], inherited: AdapterChoice | None, context: Choice
    ) -> AdapterChoice:
        """The requested adapter, else the cloned run's; either checked against the model
        chosen for this run (a clone may change it)."""
        project = context.project
        if data.get(FIELD) is not None:
            adapter = one(project_models(project), data[FIELD], FIELD, "model", project)
            if adapter.role != ModelRole.ADAPTER:
                raise _refused(
                    f"Model {adapter.name!r} is a {adapter.get_role_display()}; choose a LoRA "
                    "adapter (a model with the adapter role, such as a LoRA run's adapter "
                    "export)."
                )
            choice = AdapterChoice(usable(adapter, FIELD, ModelRole.ADAPTER), requested=True)
        elif inherited is not None:
            choice = AdapterChoice(inherited.model)
        else:
            return AdapterChoice(None)
        model = context.chosen.get("model")
        if choice.model is not None and model is not None:
            _base_check(choice.model, model)
        return choice

    def inherit(self, parent: Run) -> AdapterChoice | None:
        return AdapterChoice(stored_adapter(parent))

    def model_fields(self, value: AdapterChoice) -> dict[str, Any]:
        return {}

    def references(
        self, value: AdapterChoice, inputs: RunInputs, tree: dict[str, Any]
    ) -> dict[str, Any]:
        adapter = value.model
        if adapter is None:
            return {PLACE: None}
        rank = tree.get("actor", {}).get("lora", {}).get("rank", 0)
        if not value.requested and not rank:
            return {PLACE: None}  # a clone that turned its parent's LoRA off
        return {PLACE: Reference("model", adapter.pk).text, **_settings(adapter, tree)}

    def summary_fields(self) -> dict[str, serializers.Field]:
        return {
            FIELD: ModelRefSerializer(
                allow_null=True, help_text="The LoRA adapter the actor starts from; null: none."
            )
        }

    def summary(self, run: Run) -> dict[str, Any]:
        adapter = stored_adapter(run)
        return {FIELD: model_ref(adapter) if adapter is not None else None}

    def report_lines(self, summary: Mapping[str, Any], held_out: int | None) -> dict[str, str]:
        adapter = summary[FIELD]
        return {"LoRA adapter": f"{adapter['name']} ({adapter['kind']})" if adapter else "none"}


KIND = LoraAdapterInput()

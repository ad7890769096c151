"""The rows a run validates on: held out from its training version (default), another
dataset version of the project, or none; `data.val_files` holds
`resource:dataset-version/<id>/held-out`, `resource:dataset-version/<id>` or nothing.
Dataset-version references resolve as the training data's do (kinds.training_data)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from rest_framework import serializers

from studio.datasets.models import DatasetVersion
from studio.references.choices import one
from studio.references.ref_serializers import (
    DatasetRefSerializer,
    dataset_line,
    dataset_ref,
    id_field,
)
from studio.references.reference import Reference
from studio.references.registry import Choice, InputError, InputKind, RunInputs

if TYPE_CHECKING:
    from studio.runs.models import Run

Validation = Literal["held_out", "dataset_version", "none"]
VALIDATION_CHOICES: tuple[Validation, ...] = ("held_out", "dataset_version", "none")


@dataclass(frozen=True)
class ValidationChoice:
    mode: Validation
    version: DatasetVersion | None = None  # with mode "dataset_version"


def validation_references(choice: ValidationChoice, training: DatasetVersion) -> list[str]:
    if choice.mode == "none":
        return []
    if choice.mode == "dataset_version" and choice.version is not None:
        return [Reference("dataset-version", choice.version.pk).text]
    return [Reference("dataset-version", training.pk, "held-out").text]


class ValidationInput(InputKind[ValidationChoice]):
    name = "validation"
    resource = "validation"
    related = ("validation_version__dataset",)

    def request_fields(self) -> dict[str, serializers.Field]:
        return {
            "validation": serializers.ChoiceField(
                choices=list(VALIDATION_CHOICES),
                required=False,
                help_text="`held_out` (default): the version's rows labelled val/test, else "
                "10% of its rows (at most 500) chosen by a hash of each row and never trained "
                "on; `dataset_version`: all rows of `validation_version`; `none`: no "
                "validation.",
            ),
            "validation_version": id_field(
                "With validation='dataset_version': the version to validate on."
            ),
        }

    def choose(
        self, data: Mapping[str, Any], inherited: ValidationChoice | None, context: Choice
    ) -> ValidationChoice:
        training: DatasetVersion = context.chosen["training_data"]
        mode: Validation = data.get("validation") or (inherited.mode if inherited else "held_out")
        if mode != "dataset_version":
            if data.get("validation_version") is not None:
                raise InputError(
                    {"validation_version": ["Only with validation='dataset_version'."]}
                )
            return ValidationChoice(mode)
        wanted = data.get("validation_version") or (
            inherited.version.pk if inherited and inherited.version else None
        )
        if wanted is None:
            raise InputError({"validation_version": ["Choose the dataset version to validate on."]})
        version: DatasetVersion = one(
            DatasetVersion.objects.filter(dataset__project=context.project),
            wanted,
            "validation_version",
            "dataset version",
            context.project,
        )
        if version.data_format != training.data_format:
            raise InputError(
                {
                    "validation_version": [
                        f"Its rows are {version.data_format} data and the training "
                        f"version's are {training.data_format}; the trainer reads both alike."
                    ]
                }
            )
        return ValidationChoice(mode, version)

    def inherit(self, parent: Run) -> ValidationChoice | None:
        return ValidationChoice(cast(Validation, parent.validation), parent.validation_version)

    def model_fields(self, value: ValidationChoice) -> dict[str, Any]:
        return {"validation": value.mode, "validation_version": value.version}

    def references(
        self, value: ValidationChoice, inputs: RunInputs, tree: dict[str, Any]
    ) -> dict[str, Any]:
        files = validation_references(value, inputs.dataset_version)
        return {place: files for place in self.places()}

    def summary_fields(self) -> dict[str, serializers.Field]:
        return {
            "validation": serializers.CharField(help_text="held_out, dataset_version or none."),
            "validation_dataset": DatasetRefSerializer(
                allow_null=True,
                help_text="The version validated on (the training version when held out).",
            ),
        }

    def summary(self, run: Run) -> dict[str, Any]:
        version = (
            run.validation_version
            if run.validation == "dataset_version"
            else (run.dataset_version if run.validation == "held_out" else None)
        )
        return {"validation": run.validation, "validation_dataset": dataset_ref(version)}

    def report_lines(self, summary: Mapping[str, Any], held_out: int | None) -> dict[str, str]:
        whole = summary["validation_dataset"]
        held = (
            f"{held_out} held-out rows of {whole['name']} v{whole['number']} ({whole['rows']} rows)"
            if held_out is not None and whole
            else f"held-out rows of {dataset_line(whole)}"
        )
        lines = {
            "held_out": held,
            "dataset_version": dataset_line(whole),
            "none": "none",
        }
        return {"Validation": lines[summary["validation"]]}


KIND = ValidationInput()

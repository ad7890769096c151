"""The rows a run trains on: a dataset version of the project (a dataset means its latest
version, recorded as that version), `resource:dataset-version/<id>/train` in
`data.train_files`. The studio serves the rows (studio.api.trainer_ingest)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rest_framework import serializers

from studio.datasets.models import Dataset, DatasetVersion
from studio.projects.models import Project
from studio.references.choices import one
from studio.references.ref_serializers import (
    DatasetRefSerializer,
    dataset_line,
    dataset_ref,
    id_field,
)
from studio.references.reference import Reference
from studio.references.registry import (
    Choice,
    InputError,
    InputKind,
    Launch,
    RunInputs,
    UnresolvedReference,
)

if TYPE_CHECKING:
    from studio.runs.models import Run


def data_settings(version: DatasetVersion) -> dict[str, Any]:
    """How the trainer reads the rows: as the studio normalised this version."""
    settings: dict[str, Any] = {"data.format": version.data_format}
    for key in ("prompt_key", "answer_key", "data_source"):
        if key in version.column_mapping:
            settings[f"data.{key}"] = version.column_mapping[key]
    return settings


def resolve_dataset_version(launch: Launch, reference: Reference) -> str:
    """One of the run's own dataset versions -> the studio's URL of its rows (training
    rows for the `train` part, validation rows otherwise), picked by the run's choices."""
    run = launch.run
    if reference.pk is None or reference.pk not in (
        run.dataset_version_id,
        run.validation_version_id,
    ):
        raise UnresolvedReference(
            f"Dataset version {reference.pk} is not one of this run's inputs."
        )
    return launch.dataset_url(run.pk, "train" if reference.part == "train" else "val")


def _training_version(project: Project, data: Mapping[str, Any]) -> DatasetVersion:
    versions = DatasetVersion.objects.filter(dataset__project=project).select_related("dataset")
    wanted_dataset = data.get("dataset")
    if data.get("dataset_version") is not None:
        version: DatasetVersion = one(
            versions, data["dataset_version"], "dataset_version", "dataset version", project
        )
        if wanted_dataset is not None and version.dataset_id != wanted_dataset:
            raise InputError(
                {
                    "dataset_version": [
                        f"Version {version.pk} is not a version of dataset {wanted_dataset}."
                    ]
                }
            )
        return version
    if wanted_dataset is None:
        raise InputError(
            {
                "dataset": [
                    "Choose the training data: a dataset of the project (its latest "
                    "version) or a dataset_version."
                ]
            }
        )
    dataset: Dataset = one(
        Dataset.objects.filter(project=project), wanted_dataset, "dataset", "dataset", project
    )
    latest = versions.filter(dataset=dataset).order_by("-number").first()
    if latest is None:
        raise InputError(
            {"dataset": [f"Dataset {dataset.name!r} has no version yet; upload one first."]}
        )
    return latest


class TrainingDataInput(InputKind[DatasetVersion]):
    name = "training_data"
    resource = "dataset"
    related = ("dataset_version__dataset",)
    resolvers = {"dataset-version": resolve_dataset_version}

    def request_fields(self) -> dict[str, serializers.Field]:
        return {
            "dataset": id_field(
                "A dataset to train on: its latest version now, recorded as that version."
            ),
            "dataset_version": id_field(
                "The exact dataset version to train on (instead of `dataset`)."
            ),
        }

    def choose(
        self, data: Mapping[str, Any], inherited: DatasetVersion | None, context: Choice
    ) -> DatasetVersion:
        sent = data.get("dataset") is not None or data.get("dataset_version") is not None
        if not sent and inherited is not None:
            return inherited
        return _training_version(context.project, data)

    def inherit(self, parent: Run) -> DatasetVersion | None:
        return parent.dataset_version

    def model_fields(self, value: DatasetVersion) -> dict[str, Any]:
        return {"dataset_version": value}

    def references(
        self, value: DatasetVersion, inputs: RunInputs, tree: dict[str, Any]
    ) -> dict[str, Any]:
        train = [Reference("dataset-version", value.pk, "train").text]
        return {**{place: train for place in self.places()}, **data_settings(value)}

    def summary_fields(self) -> dict[str, serializers.Field]:
        return {"dataset": DatasetRefSerializer(allow_null=True)}

    def summary(self, run: Run) -> dict[str, Any]:
        return {"dataset": dataset_ref(run.dataset_version)}

    def report_lines(self, summary: Mapping[str, Any], held_out: int | None) -> dict[str, str]:
        if summary["dataset"] is None:  # a provenance record: its Provenance row names the files
            return {"Dataset": "none recorded"}
        return {"Dataset": dataset_line(summary["dataset"])}


KIND = TrainingDataInput()

"""A run's inputs: the resources it references, checked for its project, and the
reference strings they leave in its stored config.

A request names resources by id (`model`, `dataset` or `dataset_version`, `validation`,
`reward_version`, `reward_models`); `choose_inputs` checks each belongs to the run's
project. The stored config then holds, in each path-bearing field (trainer.config.paths),
a reference such as `resource:dataset-version/12/train`: every view of the config shows
exactly what the run uses, and two runs on different data differ in their configs. Only
the launcher turns references into paths (`launch_paths`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from django.db.models import QuerySet

from studio.datasets.models import Dataset, DatasetVersion
from studio.model_registry.models import ModelKind, ModelRole, RegisteredModel
from studio.model_registry.services import add_model_record
from studio.projects.models import Project
from studio.references.locations import DEMO_ASSETS, ModelUnavailable, model_folder
from studio.rewards.models import RewardVersion
from trainer.config.paths import PathField, path_fields, path_values

REF = "resource:"
Validation = Literal["held_out", "dataset_version", "none"]
VALIDATION_CHOICES: tuple[Validation, ...] = ("held_out", "dataset_version", "none")
VAR_PREFIX = "var/"


class InputError(Exception):
    """A reference that can't be used; `errors` are keyed by request field."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()))
        self.errors = errors


@dataclass(frozen=True)
class InputRequest:
    """The ids a request sent (None: not sent)."""

    model: int | None = None
    dataset: int | None = None
    dataset_version: int | None = None
    validation: Validation | None = None
    validation_version: int | None = None
    reward_version: int | None = None
    builtin_reward: bool = False  # the config's own reward, even where a clone had a version
    reward_models: dict[str, int] | None = None


@dataclass(frozen=True)
class RunInputs:
    model: RegisteredModel
    dataset_version: DatasetVersion
    validation: Validation
    validation_version: DatasetVersion | None
    reward_version: RewardVersion | None
    reward_models: dict[str, RegisteredModel] = field(default_factory=dict)  # place -> model

    def reward_model_ids(self) -> dict[str, int]:
        return {place: model.pk for place, model in self.reward_models.items()}


def _one(queryset: QuerySet[Any], pk: int, field_name: str, what: str, project: Project) -> Any:
    """The object if it belongs to `project`; the same error whether `pk` exists in
    another project or nowhere, so other projects' ids don't leak."""
    found = queryset.filter(pk=pk).first()
    if found is None:
        raise InputError({field_name: [f"No {what} {pk} in project {project.slug!r}."]})
    return found


def project_models(project: Project) -> QuerySet[RegisteredModel]:
    return RegisteredModel.objects.filter(project=project).select_related("checkpoint")


def demo_model(project: Project, asset: str, user: Any) -> RegisteredModel:
    """The project's record of a built-in demo model, added on first use."""
    existing = project_models(project).filter(kind=ModelKind.DEMO, relative_path=asset).first()
    if existing is not None:
        return existing
    return add_model_record(project, user, ModelKind.DEMO, name=asset, relative_path=asset)


def _default_model(
    project: Project, default_path: Any, field_name: str, user: Any
) -> RegisteredModel:
    """A model field left out: the preset's demo model (`var/demo-model`, ...), if it is one."""
    asset = default_path[len(VAR_PREFIX) :] if isinstance(default_path, str) else ""
    if default_path and default_path.startswith(VAR_PREFIX) and asset in DEMO_ASSETS:
        try:
            return demo_model(project, asset, user)
        except ModelUnavailable as exc:
            raise InputError({field_name: [str(exc)]}) from None
    raise InputError({field_name: ["Choose a model of the project (/api/models/)."]})


def _usable(model: RegisteredModel, field_name: str, role: str) -> RegisteredModel:
    if model.role != role:
        wanted = (
            "a causal LM" if role == ModelRole.POLICY else "a reward model (sequence classifier)"
        )
        raise InputError(
            {
                field_name: [
                    f"Model {model.name!r} is a {model.get_role_display()}; choose {wanted}."
                ]
            }
        )
    try:
        model_folder(model)
    except ModelUnavailable as exc:
        raise InputError({field_name: [str(exc)]}) from None
    return model


def _training_version(project: Project, request: InputRequest) -> DatasetVersion:
    versions = DatasetVersion.objects.filter(dataset__project=project).select_related("dataset")
    if request.dataset_version is not None:
        version: DatasetVersion = _one(
            versions, request.dataset_version, "dataset_version", "dataset version", project
        )
        if request.dataset is not None and version.dataset_id != request.dataset:
            raise InputError(
                {
                    "dataset_version": [
                        f"Version {version.pk} is not a version of dataset {request.dataset}."
                    ]
                }
            )
        return version
    if request.dataset is None:
        raise InputError(
            {
                "dataset": [
                    "Choose the training data: a dataset of the project (its latest "
                    "version) or a dataset_version."
                ]
            }
        )
    dataset: Dataset = _one(
        Dataset.objects.filter(project=project), request.dataset, "dataset", "dataset", project
    )
    latest = versions.filter(dataset=dataset).order_by("-number").first()
    if latest is None:
        raise InputError(
            {"dataset": [f"Dataset {dataset.name!r} has no version yet; upload one first."]}
        )
    return latest


def choose_inputs(
    project: Project,
    request: InputRequest,
    defaults: dict[str, Any],
    user: Any,
    inherited: RunInputs | None = None,
) -> RunInputs:
    """The run's inputs: what `request` names, else what `inherited` (a cloned run) had,
    else the defaults (`defaults`: the path values of the preset, for its demo models)."""
    models = project_models(project)
    if request.model is not None:
        model = _one(models, request.model, "model", "model", project)
    elif inherited is not None:
        model = inherited.model
    else:
        model = _default_model(project, defaults.get("model.path"), "model", user)
    model = _usable(model, "model", ModelRole.POLICY)

    if request.dataset is None and request.dataset_version is None and inherited is not None:
        version = inherited.dataset_version
    else:
        version = _training_version(project, request)

    validation = request.validation or (inherited.validation if inherited else "held_out")
    validation_version = None
    if validation == "dataset_version":
        wanted = request.validation_version or (
            inherited.validation_version.pk if inherited and inherited.validation_version else None
        )
        if wanted is None:
            raise InputError({"validation_version": ["Choose the dataset version to validate on."]})
        validation_version = _one(
            DatasetVersion.objects.filter(dataset__project=project),
            wanted,
            "validation_version",
            "dataset version",
            project,
        )
        if validation_version.data_format != version.data_format:
            raise InputError(
                {
                    "validation_version": [
                        f"Its rows are {validation_version.data_format} data and the training "
                        f"version's are {version.data_format}; the trainer reads both alike."
                    ]
                }
            )
    elif request.validation_version is not None:
        raise InputError({"validation_version": ["Only with validation='dataset_version'."]})

    if request.builtin_reward and request.reward_version is not None:
        raise InputError(
            {"builtin_reward": ["Choose a reward version or the built-in reward, not both."]}
        )
    keep_parents = request.reward_version is None and not request.builtin_reward
    reward = inherited.reward_version if inherited and keep_parents else None
    if request.reward_version is not None:
        reward = _one(
            RewardVersion.objects.filter(function__project=project).select_related("function"),
            request.reward_version,
            "reward_version",
            "reward version",
            project,
        )

    # Reward models: as requested ({} for none), else the clone's, else the preset's demo one.
    reward_models: dict[str, RegisteredModel] = {}
    if request.reward_models is not None:
        for place, pk in request.reward_models.items():
            reward_models[place] = _one(models, pk, f"reward_models.{place}", "model", project)
    elif inherited is not None:
        reward_models = dict(inherited.reward_models)
    else:
        for place, default in defaults.items():
            if place.startswith("reward.") and place.endswith(".path") and default:
                reward_models[place] = _default_model(
                    project, default, f"reward_models.{place}", user
                )
    for place, chosen in reward_models.items():
        _usable(chosen, f"reward_models.{place}", ModelRole.REWARD)
    return RunInputs(model, version, validation, validation_version, reward, reward_models)


# --- references in the stored config ----------------------------------------------------
def _reference(kind: str, pk: int, part: str = "") -> str:
    return f"{REF}{kind}/{pk}" + (f"/{part}" if part else "")


def reward_model_places(tree: dict[str, Any]) -> list[str]:
    """The reward-model path places a config tree has sections for."""
    places = ["reward.model.path"]
    extra = tree.get("reward", {}).get("extra_models", [])
    return places + [
        f"reward.extra_models.{i}.path" for i in range(len(extra) if isinstance(extra, list) else 0)
    ]


def filled_paths(inputs: RunInputs, tree: dict[str, Any]) -> dict[str, Any]:
    """Dotted place -> reference (or None) for every path-bearing field, plus the reward
    settings a reward version implies. `tree` is the config the places are filled in."""
    filled: dict[str, Any] = {
        path_field.dotted: _reference_for(path_field, inputs)
        for path_field in path_fields()
        # Reward models by place, below; evaluated models by the evaluation's own
        # request (studio.evaluations.creation).
        if path_field.kind.resource not in ("reward_model", "evaluated_model")
    }
    for place in reward_model_places(tree):
        chosen = inputs.reward_models.get(place)
        filled[place] = _reference("model", chosen.pk) if chosen else None
    unknown = set(inputs.reward_models) - set(reward_model_places(tree))
    if unknown:
        raise InputError(
            {
                "reward_models": [
                    f"No reward model section at {', '.join(sorted(unknown))} in the config."
                ]
            }
        )
    # How the trainer reads the rows: as the studio normalised this version.
    filled["data.format"] = inputs.dataset_version.data_format
    for key in ("prompt_key", "answer_key", "data_source"):
        if key in inputs.dataset_version.column_mapping:
            filled[f"data.{key}"] = inputs.dataset_version.column_mapping[key]
    if inputs.reward_version is not None:
        # Code typed into the studio is untrusted: it always runs in the sandbox pool.
        filled["reward.function"] = "custom"
        filled["reward.custom_name"] = inputs.reward_version.entrypoint
        filled["reward.executor"] = "sandbox"
    return filled


def _reference_for(path_field: PathField, inputs: RunInputs) -> Any:
    """What a path-bearing field holds in the stored config of a run with `inputs`."""
    resource = path_field.kind.resource
    if resource == "model":
        return _reference("model", inputs.model.pk)
    if resource == "dataset":
        return [_reference("dataset-version", inputs.dataset_version.pk, "train")]
    if resource == "validation":
        return validation_references(inputs)
    if resource == "reward":
        version = inputs.reward_version
        return _reference("reward-version", version.pk) if version else None
    return _run_folder_reference(path_field)  # run_folder


def validation_references(inputs: RunInputs) -> list[str]:
    if inputs.validation == "none":
        return []
    if inputs.validation == "dataset_version" and inputs.validation_version is not None:
        return [_reference("dataset-version", inputs.validation_version.pk)]
    return [_reference("dataset-version", inputs.dataset_version.pk, "held-out")]


def _run_folder_reference(path_field: PathField) -> str | None:
    """A folder of the run's own, filled in by the launcher; an optional one (a JSONL
    copy of the records) stays off."""
    return None if path_field.optional else f"{REF}run/{path_field.dotted}"


def path_defaults(tree: dict[str, Any]) -> dict[str, Any]:
    """Dotted place -> value of every path-bearing field set in `tree` (a preset's or a
    stored config's)."""
    return {
        place: value
        for path_field in path_fields()
        for place, value in path_values(tree, path_field.steps)
    }


def is_reference(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(REF)

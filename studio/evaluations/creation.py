"""A new evaluation: a Run of kind `evaluation` whose config names the models to evaluate.

The request names resources by id, never a path: models of the project and checkpoints of
its runs; a dataset version or a run's validation data; a reward version or a built-in
reward. They become references in the stored config (`evaluation.models.<i>.path` holds
`resource:model/<id>` or `resource:checkpoint/<id>`), which only the launcher turns into
folders (studio.references.launch_paths). From then on an evaluation is a run: it queues
under the same caps, launches as a Ray job running `python -m trainer run --from-studio`
(which evaluates when `evaluation.models` is set: trainer.evaluation.evaluate), reports through the
same ingest, and is cancelled like a run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from django.db import transaction

from studio.datasets.models import DatasetVersion
from studio.model_registry.models import ModelRole, RegisteredModel
from studio.projects.models import Project
from studio.references.kinds.reward import with_builtin_reward
from studio.references.kinds.validation import ValidationChoice
from studio.references.reference import Reference
from studio.references.reward_choice import unresolved_reward_errors
from studio.references.run_inputs import (
    InputError,
    RunInputs,
    completed_inputs,
    filled_paths,
    inherited_inputs,
    input_fields,
    project_models,
    usable,
)
from studio.rewards.models import RewardVersion
from studio.runs import dispatch, lifecycle
from studio.runs.checkpoints import CheckpointUnavailable, checkpoint_folder
from studio.runs.configs import InvalidConfig, Resolved, resolve, resources_of
from studio.runs.models import Checkpoint, Run, RunKind
from studio.runs.provenance import relaunch_refusal

# The base config of an evaluation that names no run: the demo preset's lengths and reward.
DEFAULT_PRESET = "grpo-tiny-arith"


@dataclass(frozen=True)
class Evaluated:
    """One model of an evaluation: a project model, or a checkpoint of one of its runs."""

    label: str
    reference: str  # resource:model/<id> or resource:checkpoint/<id>
    base: RegisteredModel  # the model (a checkpoint's: its run's model)


@dataclass(frozen=True)
class PromptSelection:
    """Only some prompts of `validation_of_run`'s rows: its training rows (`train`) or its
    validation rows (`val`), the prompts named by id (`evaluation.prompt_ids`)."""

    split: Literal["train", "val"]
    ids: tuple[str, ...]


@dataclass(frozen=True)
class EvaluationRequest:
    """A validated create request (studio.evaluations.serializers)."""

    name: str
    models: list[dict[str, Any]]  # {"model": id} | {"run": id, "step": n}
    dataset_version: int | None
    validation_of_run: int | None
    reward_version: int | None
    builtin_reward: str | None
    k: int
    greedy: bool
    temperature: float
    max_prompts: int | None
    max_new_tokens: int | None
    priority: int
    prompts: PromptSelection | None = None


def _checkpoint(project: Project, run_id: int, step: int, field: str) -> Checkpoint:
    found = (
        Checkpoint.objects.filter(run_id=run_id, run__project=project, step=step)
        .select_related("run__model")
        .order_by("-attempt")
        .first()
    )
    if found is None:
        raise InputError(
            {field: [f"Run {run_id} of this project has no checkpoint at step {step}."]}
        )
    refusal = relaunch_refusal(found.run)
    if refusal is not None:
        raise InputError({field: [refusal]})
    try:
        checkpoint_folder(found)
    except CheckpointUnavailable as exc:
        raise InputError({field: [str(exc)]}) from None
    return found


def evaluated_models(project: Project, wanted: list[dict[str, Any]]) -> list[Evaluated]:
    """The request's models, checked for the project, each with a distinct label."""
    models = project_models(project)
    chosen: list[Evaluated] = []
    for i, item in enumerate(wanted):
        field = f"models.{i}"
        if "model" in item:
            model = models.filter(pk=item["model"]).first()
            if model is None:
                raise InputError(
                    {field: [f"No model {item['model']} in project {project.slug!r}."]}
                )
            usable(model, field, ModelRole.POLICY)
            chosen.append(Evaluated(model.name, Reference("model", model.pk).text, model))
        else:
            checkpoint = _checkpoint(project, item["run"], item["step"], field)
            run = checkpoint.run
            assert run.model is not None  # only a provenance record has none: refused
            label = f"{run.name} @ step {checkpoint.step}"
            chosen.append(Evaluated(label, Reference("checkpoint", checkpoint.pk).text, run.model))
    labels = [c.label for c in chosen]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise InputError({"models": [f"{', '.join(repeated)} is listed more than once."]})
    return chosen


def _source_run(project: Project, run_id: int, field: str) -> Run:
    run = (
        Run.objects.filter(pk=run_id, project=project, kind=RunKind.TRAIN)
        .select_related("model", "dataset_version", "validation_version", "reward_version")
        .first()
    )
    if run is None:
        raise InputError({field: [f"No training run {run_id} in project {project.slug!r}."]})
    refusal = relaunch_refusal(run)
    if refusal is not None:
        raise InputError({field: [refusal]})
    return run


def _inputs(
    project: Project, request: EvaluationRequest, base: RegisteredModel
) -> tuple[RunInputs, Run | None]:
    """What the evaluation's prompts and reward are, and the run it takes them from."""
    if (request.dataset_version is None) == (request.validation_of_run is None):
        raise InputError(
            {
                "dataset_version": [
                    "Choose the prompts: a dataset_version or a run's validation "
                    "data (validation_of_run), one of the two."
                ]
            }
        )
    source = None
    reward: RewardVersion | None = None
    if request.validation_of_run is not None:
        source = _source_run(project, request.validation_of_run, "validation_of_run")
        parent = inherited_inputs(source)
        training_rows = request.prompts is not None and request.prompts.split == "train"
        if parent.validation == "none" and not training_rows:
            raise InputError(
                {
                    "validation_of_run": [
                        f"Run {source.pk} validates on nothing; choose a "
                        "dataset_version to evaluate on instead."
                    ]
                }
            )
        inputs = parent.replace(model=base)
        reward = parent.reward_version
    else:
        assert request.dataset_version is not None  # one of the two, checked above
        version = (
            DatasetVersion.objects.filter(dataset__project=project, pk=request.dataset_version)
            .select_related("dataset")
            .first()
        )
        if version is None:
            raise InputError(
                {
                    "dataset_version": [
                        f"No dataset version {request.dataset_version} in project {project.slug!r}."
                    ]
                }
            )
        # Every row of the version is a prompt: it is "validated on" whole.
        inputs = completed_inputs(
            project,
            {
                "model": base,
                "training_data": version,
                "validation": ValidationChoice("dataset_version", version),
                "reward": None,
                "reward_models": {},
            },
        )
    if request.reward_version is not None:
        reward = (
            RewardVersion.objects.filter(function__project=project, pk=request.reward_version)
            .select_related("function")
            .first()
        )
        if reward is None:
            raise InputError(
                {
                    "reward_version": [
                        f"No reward version {request.reward_version} in project {project.slug!r}."
                    ]
                }
            )
    if request.builtin_reward is not None:
        reward = None
    return inputs.replace(reward=reward), source


def compose_evaluation(
    project: Project, request: EvaluationRequest
) -> tuple[RunInputs, list[Evaluated], Resolved]:
    """The evaluation's inputs, models and resolved config (InvalidConfig: errors by
    request field)."""
    try:
        models = evaluated_models(project, request.models)
        if not models:
            raise InputError({"models": ["Choose at least one model or checkpoint."]})
        inputs, source = _inputs(project, request, models[0].base)
    except InputError as exc:
        raise InvalidConfig(exc.errors) from None
    stored = source.config if source is not None else None
    if stored is not None and request.builtin_reward is not None:
        stored = with_builtin_reward(stored, source.preset if source else "")
    partial: dict[str, Any] = {
        "evaluation": {
            "k": request.k,
            "greedy": request.greedy,
            "temperature": request.temperature,
            "max_prompts": request.max_prompts,
        },
        # An evaluation runs in the job's own process (trainer.evaluation.evaluate).
        "resources": {"num_workers": 1},
    }
    if request.builtin_reward is not None:
        partial["reward"] = {"function": request.builtin_reward}
    if request.max_new_tokens is not None:
        partial["rollout"] = {"max_new_tokens": request.max_new_tokens}
    if request.prompts is not None:
        partial["evaluation"]["prompt_ids"] = list(request.prompts.ids)
    errors: dict[str, list[str]] = {}

    def fill(tree: dict[str, Any]) -> dict[str, Any]:
        try:
            filled = filled_paths(inputs, tree)
        except InputError as exc:
            errors.update(exc.errors)
            return {}
        filled["evaluation.models"] = [{"label": m.label, "path": m.reference} for m in models]
        if request.prompts is not None and request.prompts.split == "train":
            # The rows the run trained on, as the studio serves them to it.
            version = inputs.dataset_version.pk
            filled["data.val_files"] = [Reference("dataset-version", version, "train").text]
        return filled

    resolved = resolve(
        partial, preset=None if stored is not None else DEFAULT_PRESET, stored=stored, fill=fill
    )
    errors.update(unresolved_reward_errors(inputs, resolved.config))
    if errors:
        raise InvalidConfig(errors)
    return inputs, models, resolved


def create_evaluation(project: Project, request: EvaluationRequest, user: Any) -> Run:
    inputs, _, resolved = compose_evaluation(project, request)
    with transaction.atomic():
        run = Run.objects.create(
            project=project,
            kind=RunKind.EVALUATION,
            name=request.name,
            config=resolved.tree,
            **input_fields(inputs),
            priority=request.priority,
            resources=resources_of(resolved.config),
            created_by=user,
        )
        lifecycle.record_creation(run, "evaluation created", user)
        dispatch.reconcile_soon()  # the queue decides when it starts
    return run


def run_checkpoints(run: Run) -> list[Checkpoint]:
    """A run's checkpoints the studio can still reach, one per step (latest attempt)."""
    found: dict[int, Checkpoint] = {}
    for checkpoint in Checkpoint.objects.filter(run=run).order_by("step", "-attempt"):
        if checkpoint.step in found:
            continue
        try:
            checkpoint_folder(checkpoint)
        except CheckpointUnavailable:
            continue  # pruned (checkpoint.keep_last) or on another machine
        found[checkpoint.step] = checkpoint
    return list(found.values())

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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from studio.datasets.models import DatasetVersion
from studio.model_registry.models import ModelRole, RegisteredModel
from studio.projects.models import Project
from studio.references.choices import one
from studio.references.kinds.validation import ValidationChoice
from studio.references.reference import Reference
from studio.references.run_inputs import (
    InputError,
    RunInputs,
    completed_inputs,
    inherited_inputs,
    project_models,
    usable,
)
from studio.rewards.models import RewardVersion
from studio.runs import service
from studio.runs.checkpoints import CheckpointUnavailable, checkpoint_folder
from studio.runs.configs import InvalidConfig, Resolved, resources_of
from studio.runs.creation import resolve_with_inputs, stored_config
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
class CreateEvaluation:
    """What an evaluation's creation is asked: a validated create request
    (studio.evaluations.serializers), or the one the "Ask the checkpoints" path makes."""

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

    @classmethod
    def from_validated(cls, data: Mapping[str, Any], **fixed: Any) -> CreateEvaluation:
        """From EvaluationCreateSerializer's (or RunCheckpointsEvaluationSerializer's)
        validated data, with `fixed` values in place of the request's."""
        values: dict[str, Any] = {
            "name": data.get("name") or "Evaluation",
            "models": data.get("models", []),
            "dataset_version": data.get("dataset_version"),
            "validation_of_run": data.get("validation_of_run"),
            "reward_version": data.get("reward_version"),
            "builtin_reward": data.get("builtin_reward"),
            "k": data["k"],
            "greedy": data["greedy"],
            "temperature": data["temperature"],
            "max_prompts": data.get("max_prompts"),
            "max_new_tokens": data.get("max_new_tokens"),
            "priority": data["priority"],
        }
        return cls(**(values | fixed))


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
            model = one(models, item["model"], field, "model", project)
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
    project: Project, request: CreateEvaluation, base: RegisteredModel
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
        versions = DatasetVersion.objects.filter(dataset__project=project).select_related("dataset")
        pk = request.dataset_version
        version = one(versions, pk, "dataset_version", "dataset version", project)
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
        rewards = RewardVersion.objects.filter(function__project=project).select_related("function")
        pk = request.reward_version
        reward = one(rewards, pk, "reward_version", "reward version", project)
    if request.builtin_reward is not None:
        reward = None
    return inputs.replace(reward=reward), source


def compose_evaluation(
    project: Project, request: CreateEvaluation
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

    def evaluated_paths(chosen: RunInputs) -> dict[str, Any]:
        paths: dict[str, Any] = {
            "evaluation.models": [{"label": m.label, "path": m.reference} for m in models]
        }
        if request.prompts is not None and request.prompts.split == "train":
            # The rows the run trained on, as the studio serves them to it.
            version = chosen.dataset_version.pk
            paths["data.val_files"] = [Reference("dataset-version", version, "train").text]
        return paths

    _, resolved = resolve_with_inputs(
        lambda tree: inputs,  # chosen above: an evaluation's inputs don't depend on its tree
        partial,
        preset=None if source is not None else DEFAULT_PRESET,
        stored=stored_config(source, request.builtin_reward is not None),
        extra_paths=evaluated_paths,
    )
    return inputs, models, resolved


def create_evaluation(project: Project, request: CreateEvaluation, user: Any, **audit: Any) -> Run:
    """A queued evaluation, stored by the runs service (studio.runs.service.store_run)
    with its `evaluation.create` audit event: its name and how many models it evaluates,
    plus `audit` (the sample an "Ask the checkpoints" evaluation asks about)."""
    inputs, models, resolved = compose_evaluation(project, request)
    new = service.NewRun(
        name=request.name,
        inputs=inputs,
        resolved=resolved,
        priority=request.priority,
        resources=resources_of(resolved.config),
        kind=RunKind.EVALUATION,
    )
    history = "evaluation created"
    detail = {"name": new.name, "models": len(models), **audit}
    return service.store_run(project, new, user, history, "evaluation.create", **detail)


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


def checkpoints_and_base(run: Run, field: str) -> list[dict[str, Any]]:
    """The models of an evaluation across `run`'s training: its base model (the baseline)
    and every checkpoint the studio can reach, as request models; InvalidConfig keyed by
    `field` when it has none, or when the run is a provenance record (its inputs can't
    be had again)."""
    checkpoints = run_checkpoints(run)
    if not checkpoints:
        raise InvalidConfig(
            {
                field: [
                    f"Run {run.pk} has no checkpoint this studio can reach (none saved yet, "
                    "or pruned by checkpoint.keep_last)."
                ]
            }
        )
    refusal = relaunch_refusal(run)
    if refusal is not None:
        raise InvalidConfig({field: [refusal]})
    assert run.model_id is not None  # only a provenance record has none: refused above
    return [{"model": run.model_id}] + [{"run": run.pk, "step": c.step} for c in checkpoints]

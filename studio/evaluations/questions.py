"""Ask the checkpoints: one rollout sample's prompt, answered by every checkpoint of the
sample's run and by its base model, as a small evaluation (docs/evaluate.md).

The evaluation does not store the prompt text for the models to read: it names the
sample's rows and the prompt's id in them. Its prompts are the sample's run's training
rows (a `train` sample) or validation rows (a `val` sample), served to the job by the
studio exactly as they were served to the run, and `evaluation.prompt_ids` keeps the one
row the sample was generated from (its group id, `<file index>:<row index>`). The trainer
reads that row with the run's own data settings and chat template, so every checkpoint
sees the prompt text the sample's model saw, never a templated copy of a templated
prompt. A `SampleQuestion` records which sample was asked, and the page compares each
answer's prompt with the sample's.
"""

from __future__ import annotations

from typing import Any, Literal

from django.db import transaction

from studio.evaluations.creation import (
    CreateEvaluation,
    PromptSelection,
    checkpoints_and_base,
    create_evaluation,
)
from studio.runs.configs import InvalidConfig
from studio.runs.models import Run, RunKind
from studio.runs.provenance import relaunch_refusal
from studio.telemetry.models import RolloutSample, SampleQuestion

# The evaluation querysets' lookup of the question (no query per evaluation in a list).
QUESTION_RELATED = "question__run"

ASKABLE_SPLITS: dict[str, Literal["train", "val"]] = {"train": "train", "val": "val"}


def _refusal(sample: RolloutSample) -> str | None:
    """Why this sample's prompt can't be put to its run's checkpoints (None: it can)."""
    run = sample.run
    if run.kind != RunKind.TRAIN:
        return (
            f"Sample {sample.pk} is an evaluation's response; ask the checkpoints from a "
            "training run's sample."
        )
    if sample.split not in ASKABLE_SPLITS:
        return f"Sample {sample.pk} is of split {sample.split!r}; only train and val are asked."
    if sample.turns is not None or run.config.get("rollout", {}).get("multi_turn", {}).get(
        "enabled"
    ):
        return (
            f"Run {run.pk} trains multi-turn episodes with tools; an evaluation answers "
            "single-turn prompts, so it would not see the prompt the sample saw."
        )
    refusal = relaunch_refusal(run)
    if refusal is not None:
        return refusal
    file_index, _, row = sample.group_id.partition(":")
    if file_index != "0" or not row:
        return f"Sample {sample.pk}'s prompt id {sample.group_id!r} names no row of the run's data."
    return None


def askable(sample: RolloutSample) -> bool:
    return _refusal(sample) is None


def ask_checkpoints(sample: RolloutSample, sampling: dict[str, Any], user: Any) -> Run:
    """Queue the evaluation that asks `sample`'s prompt of every reachable checkpoint of
    its run, the base model first. InvalidConfig: why not, keyed by request field."""
    refusal = _refusal(sample)
    if refusal:
        raise InvalidConfig({"sample": [refusal]})
    run = sample.run
    models = checkpoints_and_base(run, "sample")
    name = sampling.get("name") or f"{run.name}: ask the checkpoints (sample {sample.pk})"
    request = CreateEvaluation(
        name=name[:200],
        models=models,
        dataset_version=None,
        validation_of_run=run.pk,
        reward_version=None,
        builtin_reward=None,
        k=sampling["k"],
        greedy=sampling["greedy"],
        temperature=sampling["temperature"],
        max_prompts=None,
        max_new_tokens=sampling.get("max_new_tokens"),
        priority=sampling["priority"],
        prompts=PromptSelection(ASKABLE_SPLITS[sample.split], (sample.group_id,)),
    )
    with transaction.atomic():
        evaluation = create_evaluation(run.project, request, user, sample=sample.pk)
        SampleQuestion.objects.create(
            evaluation=evaluation,
            sample=sample,
            run=run,
            step=sample.step,
            split=sample.split,
            group_id=sample.group_id,
            prompt=sample.prompt,
        )
    return evaluation


def question_of(run: Run) -> dict[str, Any] | None:
    """The sample an "Ask the checkpoints" evaluation asks about (None: another kind)."""
    try:
        question = run.question  # selected with the evaluation (QUESTION_RELATED)
    except SampleQuestion.DoesNotExist:
        return None
    return {
        "sample": question.sample_id,
        "run": question.run_id,
        "run_name": question.run.name,
        "step": question.step,
        "split": question.split,
        "group_id": question.group_id,
        "prompt": question.prompt,
    }

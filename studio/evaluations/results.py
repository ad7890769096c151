"""An evaluation's results, computed from its stored samples with the trainer's own
scoring functions (trainer.evaluation.scores), so a table always agrees with the rows the
rollout explorer shows, and a running evaluation shows the models it has finished.

A model's samples are the evaluation's `eval` samples at its step (its position in
`evaluation.models`, from 1) of the latest attempt.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict
from typing import Any

from django.db.models import Max

from studio.references.reference import Reference
from studio.runs.models import Checkpoint, Run
from studio.telemetry.models import MetricPoint, RolloutSample
from trainer.evaluation.scores import Response, Scores, by_data_source, summarise

EVAL_SPLIT = "eval"
TOTAL_KEY = "eval/total_responses"


def _reference(path: str) -> tuple[str, int | None]:
    found = Reference.parse_or_none(path)
    return (found.kind, found.pk) if found is not None else ("", None)


def evaluated(run: Run) -> list[dict[str, Any]]:
    """The evaluation's models in order: label, step, and what each is (a project model,
    or a run's checkpoint with its run and step)."""
    section = run.config.get("evaluation", {})
    entries = section.get("models", []) if isinstance(section, dict) else []
    refs = [_reference(str(m.get("path", ""))) for m in entries]
    checkpoint_ids = [pk for kind, pk in refs if kind == "checkpoint" and pk is not None]
    checkpoints = {
        c.pk: c for c in Checkpoint.objects.filter(pk__in=checkpoint_ids).select_related("run")
    }
    found = []
    for position, (entry, (kind, pk)) in enumerate(zip(entries, refs, strict=True), start=1):
        checkpoint = checkpoints.get(pk) if kind == "checkpoint" and pk is not None else None
        found.append(
            {
                "step": position,
                "label": str(entry.get("label", "")),
                "kind": "checkpoint" if kind == "checkpoint" else "model",
                "model": pk if kind == "model" else None,
                "run": checkpoint.run_id if checkpoint else None,
                "run_name": checkpoint.run.name if checkpoint else None,
                "checkpoint_step": checkpoint.step if checkpoint else None,
            }
        )
    return found


def _scores(scores: Scores | None) -> dict[str, Any] | None:
    return asdict(scores) if scores is not None else None


def settings_of(run: Run) -> dict[str, Any]:
    section = run.config.get("evaluation", {})
    return {
        "k": int(section.get("k", 1)),
        "greedy": bool(section.get("greedy", True)),
        "temperature": float(section.get("temperature", 1.0)),
        "pass_threshold": float(section.get("pass_threshold", 1.0)),
        "max_prompts": section.get("max_prompts"),
        "max_new_tokens": int(run.config.get("rollout", {}).get("max_new_tokens", 0)),
    }


def progress(run: Run, stored: int) -> dict[str, Any]:
    """Responses stored against the total the trainer announced (null before it did)."""
    total = (
        MetricPoint.objects.filter(run=run, key=TOTAL_KEY, superseded=False)
        .order_by("-attempt", "-seq")
        .values_list("value", flat=True)
        .first()
    )
    expected = int(total) if total is not None else None
    fraction = min(1.0, stored / expected) if expected else None
    return {"responses": stored, "total": expected, "fraction": fraction}


def results(run: Run) -> dict[str, Any]:
    """Per model: overall scores and scores per data source; plus progress."""
    settings = settings_of(run)
    samples = RolloutSample.objects.filter(run=run, split=EVAL_SPLIT, superseded=False)
    attempt = samples.aggregate(last=Max("attempt"))["last"]
    rows = samples.filter(attempt=attempt).values_list(
        "step", "group_id", "data_source", "score", "response_length", "error"
    )
    by_step: dict[int, list[Response]] = defaultdict(list)
    for step, group, source, score, length, error in rows.iterator():
        by_step[step].append(Response(group, source, score, length, bool(error)))
    k, threshold = settings["k"], settings["pass_threshold"]
    models = []
    for model in evaluated(run):
        responses = by_step.get(model["step"], [])
        models.append(
            {
                **model,
                "scores": _scores(summarise(responses, k, threshold)),
                "by_data_source": {
                    source: asdict(s)
                    for source, s in by_data_source(responses, k, threshold).items()
                },
            }
        )
    stored = sum(len(v) for v in by_step.values())
    return {"settings": settings, "models": models, "progress": progress(run, stored)}

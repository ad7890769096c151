"""The report's plain data (studio/reports/html.py) read from the database."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime

import pyarrow.parquet as pq
from django.utils import timezone

from studio.datasets.heldout import held_out_mask
from studio.evaluations.questions import question_of
from studio.evaluations.results import results
from studio.references.kinds.reward import reward_code
from studio.references.summary import input_lines, run_inputs
from studio.reports.evaluation_html import EvaluationReport, render_evaluation_report
from studio.reports.html import ReportRun, ReportSample, pick_keys, render_report
from studio.reports.sweep_html import SweepReport, render_sweep_report
from studio.runs.models import Run
from studio.sweeps.models import Sweep
from studio.sweeps.serializers import SweepDetailSerializer
from studio.telemetry.models import RolloutSample, RunAlert
from studio.telemetry.series import StepRange, downsample, metric_keys
from studio.telemetry.series.reward_errors import reward_error_rates

CHART_POINTS = 500  # per series: min/max downsampled, so spikes stay visible
MAX_ALERTS = 50  # per run, newest first
SAMPLES_EACH_WAY = 3  # best and worst samples per run


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat(timespec="seconds") if moment else None


def _samples(run: Run, order: str) -> list[ReportSample]:
    # Finite scores only: Postgres sorts NaN above every number, and NaN fails both bounds.
    rows = (
        RolloutSample.objects.filter(
            run=run, superseded=False, score__gt=-math.inf, score__lt=math.inf
        )
        .order_by(order, "-step", "id")
        .values("step", "score", "prompt", "response", "ground_truth")[:SAMPLES_EACH_WAY]
    )
    return [
        ReportSample(
            step=r["step"],
            score=r["score"],
            prompt=r["prompt"],
            response=r["response"],
            ground_truth=r["ground_truth"],
        )
        for r in rows
    ]


def report_runs(runs: Sequence[Run]) -> list[ReportRun]:
    """Each run's summary, config, downsampled charts, newest alerts and extreme samples."""
    keys = pick_keys(key for run in runs for key in metric_keys(run.pk))
    series = downsample([run.pk for run in runs], keys, CHART_POINTS, StepRange()) if keys else []
    error_rates = reward_error_rates([run.pk for run in runs])
    found: list[ReportRun] = []
    for run in runs:
        alerts = RunAlert.objects.filter(run=run).order_by("-step", "kind")[:MAX_ALERTS]
        found.append(
            ReportRun(
                id=run.pk,
                name=run.name,
                project=run.project.slug,
                status=run.status,
                reward_error_rate=error_rates[run.pk],
                created_at=_iso(run.created_at) or "",
                started_at=_iso(run.started_at),
                finished_at=_iso(run.finished_at),
                config=run.config,
                inputs=input_lines(run_inputs(run), held_out_count(run)),
                reward_code=reward_code(run),
                metrics=[
                    {"key": s.key, "steps": s.steps, "values": s.values}
                    for s in series
                    if s.run_id == run.pk
                ],
                alerts=[
                    {"kind": a.kind, "severity": a.severity, "step": a.step, "message": a.message}
                    for a in alerts
                ],
                best_samples=_samples(run, "-score"),
                worst_samples=_samples(run, "score"),
            )
        )
    return found


def held_out_count(run: Run) -> int | None:
    """How many of its version's rows a run holding rows out validates on (reads the
    version's file: for reports, not lists); None for other runs."""
    version = run.dataset_version
    if run.validation != "held_out" or version is None:
        return None
    with version.file.open("rb") as handle:
        return sum(held_out_mask(pq.read_table(handle)))


def report_html(runs: Sequence[Run]) -> str:
    return render_report(report_runs(runs), _iso(timezone.now()) or "")


def report_filename(runs: Sequence[Run]) -> str:
    return "report-runs-" + "-".join(str(run.pk) for run in runs) + ".html"


def evaluation_report(run: Run) -> EvaluationReport:
    """An evaluation's report data: its results as the API serves them, and provenance."""
    found = results(run)
    lines = input_lines(run_inputs(run), held_out_count(run))
    question = question_of(run)
    prompts = lines["Validation"]
    asked: dict[str, str] | None = None
    if question is not None:
        rows = "training" if question["split"] == "train" else "validation"
        prompts = f"one row ({question['group_id']}) of the {rows} rows of {lines['Dataset']}"
        asked = {
            "Sample": f"#{question['sample']}" if question["sample"] else "deleted",
            "Run": f"#{question['run']} {question['run_name']}",
            "Step": str(question["step"]),
            "Split": question["split"],
            "Prompt id": question["group_id"],
            "Prompt": question["prompt"],
        }
    return EvaluationReport(
        id=run.pk,
        name=run.name,
        project=run.project.slug,
        status=run.status,
        created_at=_iso(run.created_at) or "",
        started_at=_iso(run.started_at),
        finished_at=_iso(run.finished_at),
        inputs={
            "Prompts": prompts,
            "Dataset": lines["Dataset"],
            "Reward": lines["Reward"],
            "Reward models": lines["Reward models"],
        },
        settings=found["settings"],
        models=found["models"],
        question=asked,
        config=run.config,
    )


def evaluation_report_html(run: Run) -> str:
    return render_evaluation_report(evaluation_report(run), _iso(timezone.now()) or "")


def evaluation_report_filename(run: Run) -> str:
    return f"report-evaluation-{run.pk}.html"


def sweep_report(sweep: Sweep) -> SweepReport:
    """A sweep's report data: the sweep as the API serves it, and its base's request."""
    detail = dict(SweepDetailSerializer(sweep).data)
    best = detail["best_trial"]
    run = Run.objects.filter(pk=best["run"]["id"]).first() if best and best["run"] else None
    return SweepReport(
        sweep=detail,
        base_request=dict(sweep.base_request or {}),
        # Names what the best trial's input ids are (its reward version, dataset, ...).
        best_inputs=input_lines(run_inputs(run)) if run else {},
        generated_at=_iso(timezone.now()) or "",
    )


def sweep_report_html(sweep: Sweep) -> str:
    return render_sweep_report(sweep_report(sweep))


def sweep_report_filename(sweep: Sweep) -> str:
    return f"report-sweep-{sweep.pk}.html"

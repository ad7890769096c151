"""Moving a sweep on: one short, idempotent pass, run by the workers on the beat and when
something happens to the sweep (workers/sweeps.py); never a long-running task.

A pass locks the sweep's row, then
1. follows each live trial: new values of the metric are reported to the pruner one step
   at a time (each decision recorded); a pruned trial, or one with a critical alert when
   the sweep stops on those, is cancelled through the ordinary cancel path; a trial whose
   run ended takes its final state;
2. while the sweep runs and has free slots and budget, asks Optuna for the next trials
   and stores each with its run, in the same transaction;
3. marks the sweep finished when its budget is spent and nothing is live.
A pass killed anywhere rolls back whole: the next one (redelivered, or the beat's) starts
from the same rows and asks for the same parameters (studio.sweeps.study), so no trial is
lost or made twice.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence

from django.db import transaction
from django.utils import timezone

from studio.runs import service
from studio.runs.configs import InvalidConfig
from studio.runs.lifecycle import TransitionRefused
from studio.runs.models import TERMINAL_STATUSES, RunStatus
from studio.runs.quota import StorageQuotaExceeded
from studio.sweeps import study
from studio.sweeps.metric import metric_label, metric_points
from studio.sweeps.models import PrunerDecision, Sweep, SweepStatus, SweepTrial, TrialState
from studio.sweeps.space import Parameter, grid_size, parse_space
from studio.sweeps.trials import start_trial_run
from studio.telemetry.models import AlertKind, AlertSeverity, RunAlert

logger = logging.getLogger(__name__)

PRUNER_NAMES = {"asha": "ASHA", "median": "the median rule"}
# The alerts that say a run games its reward (studio.telemetry.alerts.rules); a critical
# one stops a trial when its sweep asks. Groups without reward spread and reward errors
# are the run's own trouble, not gaming: they show on its page and don't stop it.
HACKING_ALERTS = (
    AlertKind.RESPONSE_LENGTH_DRIFT,
    AlertKind.REWARD_COMPONENT_DOMINANCE,
    AlertKind.KL_SPIKE,
    AlertKind.ENTROPY_SPIKE,
)


def record_of(trial: SweepTrial) -> study.TrialRecord:
    return study.TrialRecord(
        number=trial.number,
        params=trial.params,
        state=trial.state,
        value=trial.value,
        intermediate={int(step): value for step, value in trial.intermediate.items()},
        system_attrs=trial.system_attrs,
    )


def budget(sweep: Sweep, space: Sequence[Parameter]) -> int:
    """How many trials the sweep makes: its max_trials, or fewer when a grid has fewer."""
    size = grid_size(space) if sweep.method == "grid" else None
    return min(sweep.max_trials, size) if size is not None else sweep.max_trials


def advance(sweep_id: int) -> None:
    with transaction.atomic():
        sweep = Sweep.objects.select_for_update().filter(pk=sweep_id).first()
        if sweep is None:
            return
        space = parse_space(sweep.space)
        trials = list(sweep.trials.select_related("run").order_by("number"))
        for trial in trials:
            if trial.state == TrialState.RUNNING:
                _follow(sweep, trial, trials, space)
        if sweep.status == SweepStatus.RUNNING:
            _fill(sweep, trials, space)
        live = any(t.state == TrialState.RUNNING for t in trials)
        if (
            sweep.status in (SweepStatus.RUNNING, SweepStatus.PAUSED)
            and not live
            and len(trials) >= budget(sweep, space)
        ):
            sweep.status = SweepStatus.FINISHED
            sweep.status_reason = f"all {len(trials)} trials have ended"
            sweep.save(update_fields=["status", "status_reason", "updated_at"])


def _end(trial: SweepTrial, state: str, reason: str, step: int | None = None) -> None:
    trial.state = state
    trial.stop_reason = reason
    trial.stopped_at_step = step
    trial.finished_at = timezone.now()


def cancel_trial_run(sweep: Sweep, trial: SweepTrial, reason: str) -> None:
    run = trial.run
    if run is None or run.status in TERMINAL_STATUSES:
        return
    with contextlib.suppress(TransitionRefused):  # it ended meanwhile
        service.cancel_run(run, sweep.created_by, reason)


def _follow(
    sweep: Sweep, trial: SweepTrial, trials: list[SweepTrial], space: list[Parameter]
) -> None:
    run = trial.run
    if run is None:  # deleted while live
        _end(trial, TrialState.FAILED, "its run was deleted")
        trial.save()
        return
    run.refresh_from_db(fields=["status", "status_reason"])
    seen = [int(step) for step in trial.intermediate]
    new_points = metric_points(run.pk, sweep.metric, max(seen) if seen else None)
    pruner = study.PrunerSpec.from_dict(sweep.pruner)
    if new_points:
        others = [record_of(t) for t in trials if t.pk != trial.pk]
        decisions, attrs = study.decide(
            record_of(trial),
            others,
            new_points,
            space,
            sweep.direction,
            pruner,
            last_step=run.config.get("trainer", {}).get("total_steps"),
        )
        for decision in decisions:
            trial.intermediate[str(decision.step)] = decision.value
            if pruner.kind != "none":
                PrunerDecision.objects.get_or_create(
                    trial=trial,
                    step=decision.step,
                    defaults={"value": decision.value, "pruned": decision.pruned},
                )
        trial.system_attrs = attrs
        last = decisions[-1]
        if last.pruned:
            reason = (
                f"pruned by {PRUNER_NAMES.get(pruner.kind, pruner.kind)} at step {last.step}: "
                f"{metric_label(sweep.metric)} {last.value:.4g}"
            )
            trial.value = last.value
            _end(trial, TrialState.PRUNED, reason, last.step)
            trial.save()
            cancel_trial_run(sweep, trial, f"sweep {sweep.pk}: {reason}")
            return
    if sweep.stop_on_critical_alert and run.status not in TERMINAL_STATUSES:
        alert = (
            RunAlert.objects.filter(
                run_id=run.pk, severity=AlertSeverity.CRITICAL, kind__in=HACKING_ALERTS
            )
            .order_by("step")
            .first()
        )
        if alert is not None:
            reason = f"stopped at step {alert.step}: critical alert ({alert.get_kind_display()})"
            _end(trial, TrialState.STOPPED, reason, alert.step)
            trial.save()
            cancel_trial_run(sweep, trial, f"sweep {sweep.pk}: {reason}")
            return
    if run.status == RunStatus.SUCCEEDED:
        steps = sorted(trial.intermediate, key=int)
        if steps:
            trial.value = trial.intermediate[steps[-1]]
            _end(trial, TrialState.COMPLETE, "")
        else:
            _end(trial, TrialState.FAILED, f"its run logged no {metric_label(sweep.metric)}")
    elif run.status in (RunStatus.FAILED, RunStatus.CANCELLED):
        _end(trial, TrialState.FAILED, f"its run {run.status}: {run.status_reason}"[:2000])
    trial.save()


def _fill(sweep: Sweep, trials: list[SweepTrial], space: list[Parameter]) -> None:
    live = sum(t.state == TrialState.RUNNING for t in trials)
    total = budget(sweep, space)
    while live < sweep.parallelism and len(trials) < total:
        number = len(trials)
        records = [record_of(t) for t in trials]
        params = study.ask(records, space, sweep.method, sweep.seed, sweep.direction)
        trial = SweepTrial(sweep=sweep, number=number, params=params)
        try:
            with transaction.atomic():
                trial.run = start_trial_run(sweep, number, params, space)
        except InvalidConfig as exc:
            # The base refuses this combination: a failed trial, so the sampler moves on.
            problems = "; ".join(f"{k}: {' '.join(map(str, v))}" for k, v in exc.errors.items())
            _end(trial, TrialState.FAILED, f"its run was refused: {problems}"[:2000])
        except StorageQuotaExceeded as exc:
            # No trial can start until space is freed: pause, saying why (resume after).
            sweep.status = SweepStatus.PAUSED
            sweep.status_reason = f"paused: {exc}"[:2000]
            sweep.save(update_fields=["status", "status_reason", "updated_at"])
            return
        trial.save()
        trials.append(trial)
        live += trial.state == TrialState.RUNNING

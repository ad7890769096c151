"""What can be done to a sweep, as the functions the API's views call: create, pause,
resume, stop, add trials. Refusals are the runs service's: InvalidConfig (a 400 keyed by
request field) and TransitionRefused (a 409)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction

from studio.projects.models import AuditEvent, Project
from studio.runs.configs import InvalidConfig
from studio.runs.creation import compose
from studio.runs.deletion import delete_run
from studio.runs.lifecycle import TransitionRefused
from studio.runs.models import TERMINAL_STATUSES, Run, RunKind
from studio.runs.service import refuse_provenance
from studio.sweeps import dispatch
from studio.sweeps.driver import budget, cancel_trial_run
from studio.sweeps.models import Direction, Sweep, SweepMethod, SweepStatus, TrialState
from studio.sweeps.space import Parameter, SpaceError, grid_size, parse_space
from studio.sweeps.study import PRUNER_KINDS, PrunerSpec
from studio.sweeps.trials import trial_request

MAX_TRIALS = 500
MAX_ADDED = 100


@dataclass(frozen=True)
class CreateSweep:
    """A create request (the view's validated data less `project`)."""

    name: str
    space: Any
    method: str = SweepMethod.RANDOM
    max_trials: int = 8
    parallelism: int = 1
    seed: int = 0
    metric: str = ""
    direction: str = Direction.MAXIMIZE
    metric_reward: str = ""
    pruner: Mapping[str, Any] = field(default_factory=lambda: {"kind": "none"})
    stop_on_critical_alert: bool = True
    base_run: Run | None = None
    preset: str = ""
    config: dict[str, Any] | None = None
    overrides: list[str] = field(default_factory=list)
    inputs: Mapping[str, Any] = field(default_factory=dict)


def queue_caps() -> list[tuple[str, int]]:
    """The queue's caps on a project's and a user's running runs (0: none)."""
    caps = [
        ("RLSTUDIO_PROJECT_MAX_RUNNING_JOBS", int(settings.RLSTUDIO_PROJECT_MAX_RUNNING_JOBS)),
        ("RLSTUDIO_USER_MAX_RUNNING_JOBS", int(settings.RLSTUDIO_USER_MAX_RUNNING_JOBS)),
    ]
    return [(name, value) for name, value in caps if value > 0]


def _pruner(raw: Mapping[str, Any]) -> PrunerSpec:
    try:
        spec = PrunerSpec.from_dict(raw)
    except (TypeError, ValueError):
        raise InvalidConfig({"pruner": ["min_steps and reduction_factor are integers."]}) from None
    if spec.kind not in PRUNER_KINDS:
        raise InvalidConfig({"pruner": [f"kind is one of {', '.join(PRUNER_KINDS)}."]})
    if spec.min_steps < 1 or spec.reduction_factor < 2:
        raise InvalidConfig({"pruner": ["min_steps is at least 1, reduction_factor at least 2."]})
    return spec


def _check_request(request: CreateSweep) -> tuple[list[Parameter], PrunerSpec]:
    try:
        space = parse_space(request.space)
    except SpaceError as exc:
        raise InvalidConfig({"space": [str(exc)]}) from None
    if request.method == SweepMethod.GRID and grid_size(space) is None:
        floats = [p.name for p in space if p.type == "float"]
        raise InvalidConfig(
            {
                "space": [
                    f"A grid can't search float ranges ({', '.join(floats)}); give their "
                    "values as choices, or use random or tpe."
                ]
            }
        )
    if (
        any(p.name in ("reward_version", "builtin_reward") for p in space)
        and not request.metric_reward
    ):
        raise InvalidConfig(
            {
                "metric_reward": [
                    "The space searches reward versions: name the one built-in "
                    "reward that scores every trial's validation, so trials compare."
                ]
            }
        )
    if not 1 <= request.max_trials <= MAX_TRIALS:
        raise InvalidConfig({"max_trials": [f"Between 1 and {MAX_TRIALS}."]})
    for name, cap in queue_caps():
        if request.parallelism > cap:
            raise InvalidConfig(
                {
                    "parallelism": [
                        f"{request.parallelism} trials at once is above the queue's "
                        f"cap of {cap} running runs ({name}); choose at most {cap}."
                    ]
                }
            )
    if request.parallelism < 1:
        raise InvalidConfig({"parallelism": ["At least 1."]})
    return space, _pruner(request.pruner)


def _check_base(project: Project, request: CreateSweep) -> None:
    base = request.base_run
    if base is not None:
        if base.project_id != project.pk:
            raise InvalidConfig({"base_run": ["Not a run of this project."]})
        if base.kind == RunKind.EVALUATION:
            raise InvalidConfig({"base_run": ["An evaluation can't be a sweep's base."]})
        refuse_provenance(base)
    elif not request.preset and not request.config:
        raise InvalidConfig({"base_run": ["Name a run to clone, or a preset or config."]})


def _corner_params(space: Sequence[Parameter]) -> list[dict[str, Any]]:
    """Parameter sets that bound the space: each value at each of its corners, the others
    at their first, so every input id and every range end is composed once."""
    first = {p.name: p.corners()[0] for p in space}
    combos = [dict(first)]
    for p in space:
        combos += [{**first, p.name: value} for value in p.corners()[1:]]
    return combos


def _compose_trial(
    sweep: Sweep, params: Mapping[str, Any], space: Sequence[Parameter], user: User
) -> dict[str, Any]:
    request = trial_request(sweep, 0, params, space)
    _, resolved = compose(sweep.project, request, user, parent=sweep.base_run)
    return resolved.tree


def create_sweep(project: Project, request: CreateSweep, user: User) -> Sweep:
    space, pruner = _check_request(request)
    _check_base(project, request)
    sweep = Sweep(
        project=project,
        name=request.name,
        base_run=request.base_run,
        preset="" if request.base_run else request.preset,
        base_request={}
        if request.base_run
        else {
            "config": request.config,
            "overrides": list(request.overrides),
            "inputs": dict(request.inputs),
        },
        space=request.space,
        method=request.method,
        seed=request.seed,
        metric=request.metric,
        direction=request.direction,
        metric_reward=request.metric_reward,
        max_trials=request.max_trials,
        parallelism=request.parallelism,
        pruner=pruner.as_dict(),
        stop_on_critical_alert=request.stop_on_critical_alert,
        created_by=user,
    )
    # Compose the base and the space's corners now: a space the config refuses is a 400
    # here, not a row of failed trials later.
    try:
        base = trial_request(sweep, 0, {}, [])
        _, resolved = compose(project, base, user, parent=request.base_run)
    except InvalidConfig as exc:
        raise InvalidConfig(
            {"base": [f"{k}: {' '.join(map(str, v))}" for k, v in exc.errors.items()]}
        ) from None
    sweep.base_config = resolved.tree
    for params in _corner_params(space):
        try:
            _compose_trial(sweep, params, space, user)
        except InvalidConfig as exc:
            shown = ", ".join(f"{k}={v}" for k, v in params.items())
            problems = "; ".join(f"{k}: {' '.join(map(str, v))}" for k, v in exc.errors.items())
            raise InvalidConfig({"space": [f"With {shown}: {problems}"]}) from None
    with transaction.atomic():
        sweep.save()
        AuditEvent.record("sweep.create", sweep, project, user, name=sweep.name)
        dispatch.advance_soon(sweep.pk)
    return sweep


def _set_status(sweep: Sweep, user: User, status: str, reason: str, verb: str) -> None:
    Sweep.objects.filter(pk=sweep.pk).update(status=status, status_reason=reason)
    sweep.status, sweep.status_reason = status, reason
    AuditEvent.record(f"sweep.{verb}", sweep, sweep.project, user)


def pause_sweep(sweep: Sweep, user: User) -> None:
    """No new trials; the live ones go on (and are still pruned)."""
    with transaction.atomic():
        locked = Sweep.objects.select_for_update().get(pk=sweep.pk)
        if locked.status != SweepStatus.RUNNING:
            raise TransitionRefused(locked.status, f"A {locked.status} sweep can't be paused.")
        _set_status(sweep, user, SweepStatus.PAUSED, f"paused by {user.username}", "pause")


def resume_sweep(sweep: Sweep, user: User) -> None:
    with transaction.atomic():
        locked = Sweep.objects.select_for_update().get(pk=sweep.pk)
        if locked.status != SweepStatus.PAUSED:
            raise TransitionRefused(locked.status, f"A {locked.status} sweep can't be resumed.")
        _set_status(sweep, user, SweepStatus.RUNNING, "", "resume")
        dispatch.advance_soon(sweep.pk)


def stop_sweep(sweep: Sweep, user: User) -> None:
    """Final: no new trials, and the live ones are cancelled (their trials `stopped`)."""
    with transaction.atomic():
        locked = Sweep.objects.select_for_update().get(pk=sweep.pk)
        if locked.status in (SweepStatus.STOPPED, SweepStatus.FINISHED):
            raise TransitionRefused(locked.status, f"A {locked.status} sweep can't be stopped.")
        for trial in locked.trials.filter(state=TrialState.RUNNING).select_related("run"):
            trial.state = TrialState.STOPPED
            trial.stop_reason = f"stopped with its sweep by {user.username}"
            trial.save(update_fields=["state", "stop_reason"])
            cancel_trial_run(locked, trial, f"sweep {sweep.pk} stopped")
        _set_status(sweep, user, SweepStatus.STOPPED, f"stopped by {user.username}", "stop")


def add_trials(sweep: Sweep, count: int, user: User) -> None:
    """Raise the budget by `count`; a finished sweep runs again."""
    if not 1 <= count <= MAX_ADDED:
        raise InvalidConfig({"count": [f"Between 1 and {MAX_ADDED}."]})
    with transaction.atomic():
        locked = Sweep.objects.select_for_update().get(pk=sweep.pk)
        if locked.status == SweepStatus.STOPPED:
            raise TransitionRefused(locked.status, "A stopped sweep takes no more trials.")
        space = parse_space(locked.space)
        if locked.method == SweepMethod.GRID and budget(locked, space) >= (grid_size(space) or 0):
            raise InvalidConfig({"count": ["Every point of the grid has a trial already."]})
        if locked.max_trials + count > MAX_TRIALS:
            raise InvalidConfig({"count": [f"A sweep has at most {MAX_TRIALS} trials."]})
        status = SweepStatus.RUNNING if locked.status == SweepStatus.FINISHED else locked.status
        Sweep.objects.filter(pk=sweep.pk).update(
            max_trials=locked.max_trials + count, status=status, status_reason=""
        )
        sweep.max_trials, sweep.status = locked.max_trials + count, status
        AuditEvent.record("sweep.add_trials", sweep, sweep.project, user, count=count)
        dispatch.advance_soon(sweep.pk)


def delete_sweep(sweep: Sweep, user: User) -> int:
    """Delete a sweep that has no live trial, with every trial's run and their files; the
    bytes freed. TransitionRefused while a trial runs (stop the sweep and wait); the runs
    service's refusals (a run something else uses: RunHeld, naming it) undo it whole."""
    freed = 0
    with transaction.atomic():
        locked = Sweep.objects.select_for_update().get(pk=sweep.pk)
        trials = list(locked.trials.select_related("run"))
        live = [
            t.number for t in trials if t.run is not None and t.run.status not in TERMINAL_STATUSES
        ]
        if live:
            raise TransitionRefused(
                locked.status,
                f"Sweep {sweep.pk} ({sweep.name!r}) has trials whose runs have not ended "
                f"({', '.join(map(str, live))}); stop it and wait until they have.",
            )
        AuditEvent.record("sweep.delete", sweep, sweep.project, user, name=sweep.name)
        locked.delete()  # first: it protects its base run, which may be a trial's parent
        for trial in trials:
            if trial.run is not None:
                freed += delete_run(trial.run, user)
    return freed

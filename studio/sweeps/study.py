"""Our trials as an Optuna study, rebuilt from the database whenever a sweep moves on.

Nothing of Optuna's is stored but what our rows hold (parameters, states, values, the
intermediate metric and the pruner's per-trial attributes), so a sweep survives any
process restart and needs no storage of Optuna's own. The sampler is made afresh for
each ask, seeded from the sweep's seed and the trial's number: the same history asks for
the same parameters, whichever worker asks, however often a task is retried.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import optuna
from optuna.importance import PedAnovaImportanceEvaluator, get_param_importances
from optuna.pruners import BasePruner, MedianPruner, NopPruner, SuccessiveHalvingPruner
from optuna.samplers import BaseSampler, GridSampler, RandomSampler, TPESampler
from optuna.trial import FrozenTrial, create_trial
from optuna.trial import TrialState as OptunaState

from studio.sweeps.space import Parameter, distributions

optuna.logging.set_verbosity(optuna.logging.WARNING)

IMPORTANCE_METHOD = "PED-ANOVA"
MIN_TRIALS_FOR_IMPORTANCE = 4
PRUNER_KINDS = ("asha", "median", "none")

OPTUNA_STATES = {
    "running": OptunaState.RUNNING,
    "complete": OptunaState.COMPLETE,
    "pruned": OptunaState.PRUNED,
    "stopped": OptunaState.FAIL,  # kept out of the sampler's model, as failures are
    "failed": OptunaState.FAIL,
}


@dataclass(frozen=True)
class TrialRecord:
    """What the study needs of one of our trials (studio.sweeps.models.SweepTrial)."""

    number: int
    params: Mapping[str, Any]
    state: str
    value: float | None = None
    intermediate: Mapping[int, float] | None = None
    system_attrs: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class PrunerSpec:
    """How trials are stopped early: ASHA (successive halving at steps min_steps,
    min_steps * factor, ...), the median rule (below the median of earlier trials at the
    same step, from min_steps on), or none."""

    kind: str = "none"
    min_steps: int = 1
    reduction_factor: int = 2

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> PrunerSpec:
        return cls(
            kind=str(raw.get("kind", "none")),
            min_steps=int(raw.get("min_steps", 1)),
            reduction_factor=int(raw.get("reduction_factor", 2)),
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "min_steps": self.min_steps,
            "reduction_factor": self.reduction_factor,
        }

    def build(self) -> BasePruner:
        if self.kind == "asha":
            return SuccessiveHalvingPruner(
                min_resource=self.min_steps, reduction_factor=self.reduction_factor
            )
        if self.kind == "median":
            return MedianPruner(n_startup_trials=2, n_warmup_steps=self.min_steps)
        return NopPruner()


def sampler_for(method: str, seed: int, number: int, params: Sequence[Parameter]) -> BaseSampler:
    """The sampler that asks for trial `number`, seeded from the sweep's seed and it."""
    trial_seed = (seed * 1_000_003 + number) % (2**32)
    if method == "grid":
        grid = {p.name: p.grid_values() for p in params}
        return GridSampler(grid, seed=seed % (2**32))
    if method == "tpe":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # `multivariate` is marked experimental
            return TPESampler(seed=trial_seed, multivariate=True, n_startup_trials=10)
    return RandomSampler(seed=trial_seed)


def _frozen(record: TrialRecord, dists: Mapping[str, Any]) -> FrozenTrial:
    state = OPTUNA_STATES[record.state]
    return create_trial(
        state=state,
        params=dict(record.params),
        distributions={name: dists[name] for name in record.params if name in dists},
        value=record.value if state == OptunaState.COMPLETE else None,
        intermediate_values=dict(record.intermediate or {}),
        system_attrs=dict(record.system_attrs or {}),
    )


def build_study(
    records: Sequence[TrialRecord],
    params: Sequence[Parameter],
    direction: str,
    sampler: BaseSampler | None = None,
    pruner: BasePruner | None = None,
) -> optuna.Study:
    """An in-memory study holding `records`, in number order (Optuna numbers trials as it
    adds them, so trial i of the study is our trial i)."""
    study = optuna.create_study(
        direction=direction, sampler=sampler or RandomSampler(), pruner=pruner or NopPruner()
    )
    dists = distributions(params)
    for record in sorted(records, key=lambda r: r.number):
        study.add_trial(_frozen(record, dists))
    return study


def ask(
    records: Sequence[TrialRecord],
    params: Sequence[Parameter],
    method: str,
    seed: int,
    direction: str,
) -> dict[str, Any]:
    """The parameters of the next trial (number len(records))."""
    sampler = sampler_for(method, seed, len(records), params)
    study = build_study(records, params, direction, sampler=sampler)
    trial = study.ask(distributions(params))
    return dict(trial.params)


@dataclass(frozen=True)
class Decision:
    step: int
    value: float
    pruned: bool


def decide(
    record: TrialRecord,
    others: Sequence[TrialRecord],
    new_points: Sequence[tuple[int, float]],
    params: Sequence[Parameter],
    direction: str,
    pruner: PrunerSpec,
    last_step: int | None = None,
) -> tuple[list[Decision], dict[str, Any]]:
    """Report `new_points` (step order) of a running trial to the pruner one by one, as
    the trial would have reported them itself; stop at the first that prunes. The value
    at the trial's `last_step` is its result, not a point to stop at: it is reported,
    not judged. Returns the decisions and the trial's pruner attributes afterwards."""
    study = build_study([*others, record], params, direction, pruner=pruner.build())
    [frozen] = [t for t in study.get_trials(deepcopy=False) if t.number == record.number]
    trial = optuna.trial.Trial(study, frozen._trial_id)
    decisions: list[Decision] = []
    for step, value in new_points:
        trial.report(value, step)
        pruned = (last_step is None or step < last_step) and trial.should_prune()
        decisions.append(Decision(step, value, pruned))
        if pruned:
            break
    attrs = study.get_trials(deepcopy=False)[frozen.number].system_attrs
    return decisions, dict(attrs)


def importance(
    records: Sequence[TrialRecord], params: Sequence[Parameter], direction: str
) -> dict[str, float] | None:
    """Each parameter's importance to the metric over the complete trials (PED-ANOVA),
    or None with too few of them to say."""
    complete = [r for r in records if r.state == "complete" and r.value is not None]
    searched = [p for p in params if len({repr(r.params.get(p.name)) for r in complete}) > 1]
    if len(complete) < MIN_TRIALS_FOR_IMPORTANCE or not searched:
        return None
    study = build_study(complete, params, direction)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PED-ANOVA is marked experimental
        found = get_param_importances(
            study, evaluator=PedAnovaImportanceEvaluator(), params=[p.name for p in searched]
        )
    return {name: float(found.get(name, 0.0)) for name in (p.name for p in params)}

"""Request and response shapes of the sweeps API (the views: studio/api/sweeps/)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.db.models import Max
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from studio.references.registry import request_fields
from studio.sweeps import study
from studio.sweeps.driver import record_of
from studio.sweeps.metric import metric_label
from studio.sweeps.models import Direction, Sweep, SweepMethod, SweepTrial, TrialState
from studio.sweeps.service import MAX_ADDED, MAX_TRIALS
from studio.sweeps.space import PARAM_TYPES, SpaceError, grid_size, parse_space
from studio.telemetry.models import MetricPoint
from trainer.rewards.builtins import BUILTIN_NAMES

# Config places that differ between any two runs whatever their parameters.
PER_RUN_PLACES = ("checkpoint.dir", "trainer.experiment_name", "logging.")


class PrunerSerializer(serializers.Serializer[dict[str, Any]]):
    kind = serializers.ChoiceField(
        choices=[("asha", "ASHA"), ("median", "Median stopping"), ("none", "None")],
        default="none",
        help_text="ASHA: successive halving at min_steps, min_steps x factor, ...; median: "
        "below the median of earlier trials at the same step.",
    )
    min_steps = serializers.IntegerField(
        min_value=1, default=1, help_text="The first step at which a trial can be stopped."
    )
    reduction_factor = serializers.IntegerField(
        min_value=2, max_value=10, default=2, help_text="ASHA: 1 in this many goes on at a rung."
    )


class ParameterSerializer(serializers.Serializer[dict[str, Any]]):
    """One parameter of the space (studio.sweeps.space); checked as a whole by the view."""

    name = serializers.CharField(help_text="A config key (actor.optim.lr) or a run input field.")
    type = serializers.ChoiceField(choices=list(PARAM_TYPES))
    low = serializers.FloatField(required=False)
    high = serializers.FloatField(required=False)
    log = serializers.BooleanField(required=False)
    step = serializers.IntegerField(required=False, min_value=1)
    values = serializers.ListField(child=serializers.JSONField(), required=False)


class SweepCreateSerializer(serializers.Serializer[dict[str, Any]]):
    project = serializers.SlugField(help_text="The project's slug.")
    name = serializers.CharField(max_length=200)
    base_run = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, help_text="Clone this run for each trial."
    )
    preset = serializers.CharField(
        required=False, allow_blank=True, default="", help_text="Without base_run: a preset."
    )
    config = serializers.JSONField(required=False, allow_null=True, default=None)
    overrides = serializers.ListField(
        child=serializers.CharField(max_length=2000), required=False, default=list, max_length=200
    )
    inputs = serializers.DictField(
        child=serializers.JSONField(),
        required=False,
        default=dict,
        help_text="The base's input fields, as in POST /api/runs/ (dataset_version, ...).",
    )
    space = ParameterSerializer(many=True)
    method = serializers.ChoiceField(choices=SweepMethod.choices, default=SweepMethod.RANDOM)
    seed = serializers.IntegerField(min_value=0, max_value=2**31 - 1, default=0)
    metric = serializers.CharField(
        max_length=200,
        required=False,
        allow_blank=True,
        default="",
        help_text="A logged metric key; empty: the validation score.",
    )
    direction = serializers.ChoiceField(choices=Direction.choices, default=Direction.MAXIMIZE)
    metric_reward = serializers.ChoiceField(
        choices=list(BUILTIN_NAMES),
        required=False,
        allow_blank=True,
        default="",
        help_text="A built-in reward that scores every trial's validation (needed when the "
        "space searches reward versions).",
    )
    max_trials = serializers.IntegerField(min_value=1, max_value=MAX_TRIALS, default=8)
    parallelism = serializers.IntegerField(min_value=1, max_value=64, default=1)
    pruner = PrunerSerializer(required=False)
    stop_on_critical_alert = serializers.BooleanField(default=True)

    def validate_inputs(self, value: Mapping[str, Any]) -> Mapping[str, Any]:
        unknown = sorted(set(value) - set(request_fields()))
        if unknown:
            raise serializers.ValidationError(f"Not run input fields: {', '.join(unknown)}.")
        return value

    def validate_space(self, value: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        # The posted parameters without the keys the serializer filled in with nothing.
        cleaned = [{k: v for k, v in p.items() if v is not None} for p in value]
        try:
            parse_space(cleaned)
        except SpaceError as exc:
            raise serializers.ValidationError(str(exc)) from None
        return cleaned


class AddTrialsSerializer(serializers.Serializer[dict[str, Any]]):
    count = serializers.IntegerField(min_value=1, max_value=MAX_ADDED)


class DeletedSweepSerializer(serializers.Serializer[dict[str, Any]]):
    id = serializers.IntegerField()
    name = serializers.CharField()
    freed_bytes = serializers.IntegerField(help_text="What its trials' files took on disk.")


class RunLinkSerializer(serializers.Serializer[dict[str, Any]]):
    id = serializers.IntegerField()
    name = serializers.CharField()
    status = serializers.CharField()


class TrialSerializer(serializers.ModelSerializer[SweepTrial]):
    run = serializers.SerializerMethodField()
    steps = serializers.SerializerMethodField()
    intermediate = serializers.SerializerMethodField()

    class Meta:
        model = SweepTrial
        fields = [
            "number", "run", "params", "state", "value", "steps", "intermediate",
            "stopped_at_step", "stop_reason", "created_at", "finished_at",
        ]  # fmt: skip

    @extend_schema_field(RunLinkSerializer(allow_null=True))
    def get_run(self, trial: SweepTrial) -> dict[str, Any] | None:
        run = trial.run
        return {"id": run.pk, "name": run.name, "status": run.status} if run else None

    @extend_schema_field(serializers.IntegerField())
    def get_steps(self, trial: SweepTrial) -> int:
        """The latest step its run logged a metric at."""
        return int(self.context.get("steps", {}).get(trial.run_id, 0) or 0)

    @extend_schema_field(
        serializers.ListField(child=serializers.ListField(child=serializers.FloatField()))
    )
    def get_intermediate(self, trial: SweepTrial) -> list[list[float]]:
        """[step, metric value] pairs in step order."""
        return [[int(s), v] for s, v in sorted(trial.intermediate.items(), key=lambda i: int(i[0]))]


class ConfigChangeSerializer(serializers.Serializer[dict[str, Any]]):
    path = serializers.CharField()
    base = serializers.JSONField()
    value = serializers.JSONField()


class BestTrialSerializer(TrialSerializer):
    config_diff = serializers.SerializerMethodField()

    class Meta(TrialSerializer.Meta):
        fields = [*TrialSerializer.Meta.fields, "config_diff"]

    @extend_schema_field(ConfigChangeSerializer(many=True))
    def get_config_diff(self, trial: SweepTrial) -> list[dict[str, Any]]:
        """The config keys where the trial's run differs from the sweep's base."""
        if trial.run is None:
            return []
        base = _flat(trial.sweep.base_config)
        mine = _flat(trial.run.config)
        changed = sorted(
            p for p in set(base) | set(mine)
            if base.get(p) != mine.get(p) and not p.startswith(PER_RUN_PLACES)
        )  # fmt: skip
        return [{"path": p, "base": base.get(p), "value": mine.get(p)} for p in changed]


def _flat(tree: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in tree.items():
        if isinstance(value, Mapping) and value:
            flat |= _flat(value, f"{prefix}{key}.")
        else:
            flat[f"{prefix}{key}"] = value
    return flat


class BestSerializer(serializers.Serializer[dict[str, Any]]):
    number = serializers.IntegerField()
    run = serializers.IntegerField(allow_null=True)
    value = serializers.FloatField()


class ImportanceSerializer(serializers.Serializer[dict[str, Any]]):
    method = serializers.CharField()
    values = serializers.DictField(child=serializers.FloatField())


def best_trial(sweep: Sweep, trials: Sequence[SweepTrial]) -> SweepTrial | None:
    """The complete trial with the best metric value (ties: the earliest)."""
    done = [t for t in trials if t.state == TrialState.COMPLETE and t.value is not None]
    if not done:
        return None
    sign = -1.0 if sweep.direction == Direction.MAXIMIZE else 1.0
    return min(done, key=lambda t: (sign * float(t.value or 0.0), t.number))


class SweepSerializer(serializers.ModelSerializer[Sweep]):
    project = serializers.CharField(source="project.slug", read_only=True)
    created_by = serializers.CharField(source="created_by.username", read_only=True)
    metric_label = serializers.SerializerMethodField()
    trial_counts = serializers.SerializerMethodField()
    best = serializers.SerializerMethodField()

    class Meta:
        model = Sweep
        fields = [
            "id", "project", "name", "method", "status", "metric", "metric_label", "direction",
            "max_trials", "parallelism", "trial_counts", "best", "created_at", "created_by",
        ]  # fmt: skip

    def _trials(self, sweep: Sweep) -> list[SweepTrial]:
        cached = getattr(sweep, "_listed_trials", None)
        if cached is None:
            cached = list(sweep.trials.all())
            sweep._listed_trials = cached  # type: ignore[attr-defined]
        return cached

    def get_metric_label(self, sweep: Sweep) -> str:
        return metric_label(sweep.metric)

    @extend_schema_field(serializers.DictField(child=serializers.IntegerField()))
    def get_trial_counts(self, sweep: Sweep) -> dict[str, int]:
        counts = {state: 0 for state in TrialState.values}
        for trial in self._trials(sweep):
            counts[trial.state] += 1
        return counts

    @extend_schema_field(BestSerializer(allow_null=True))
    def get_best(self, sweep: Sweep) -> dict[str, Any] | None:
        best = best_trial(sweep, self._trials(sweep))
        if best is None:
            return None
        return {"number": best.number, "run": best.run_id, "value": best.value}


class SweepDetailSerializer(SweepSerializer):
    base_run = serializers.SerializerMethodField()
    grid_size = serializers.SerializerMethodField()
    trials = serializers.SerializerMethodField()
    best_trial = serializers.SerializerMethodField()
    importance = serializers.SerializerMethodField()

    class Meta(SweepSerializer.Meta):
        fields = [
            *SweepSerializer.Meta.fields, "base_run", "preset", "space", "seed",
            "metric_reward", "pruner", "stop_on_critical_alert", "status_reason",
            "grid_size", "trials", "best_trial", "importance",
        ]  # fmt: skip

    @extend_schema_field(RunLinkSerializer(allow_null=True))
    def get_base_run(self, sweep: Sweep) -> dict[str, Any] | None:
        run = sweep.base_run
        return {"id": run.pk, "name": run.name, "status": run.status} if run else None

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_grid_size(self, sweep: Sweep) -> int | None:
        return grid_size(parse_space(sweep.space))

    def _trial_context(self, sweep: Sweep) -> dict[str, Any]:
        run_ids = [t.run_id for t in self._trials(sweep) if t.run_id]
        steps = dict(
            MetricPoint.objects.filter(run_id__in=run_ids, superseded=False)
            .values("run_id")
            .annotate(last=Max("step"))
            .values_list("run_id", "last")
        )
        return {"steps": steps}

    @extend_schema_field(TrialSerializer(many=True))
    def get_trials(self, sweep: Sweep) -> list[Any]:
        return list(
            TrialSerializer(self._trials(sweep), many=True, context=self._trial_context(sweep)).data
        )

    @extend_schema_field(BestTrialSerializer(allow_null=True))
    def get_best_trial(self, sweep: Sweep) -> Any:
        best = best_trial(sweep, self._trials(sweep))
        if best is None:
            return None
        return BestTrialSerializer(best, context=self._trial_context(sweep)).data

    @extend_schema_field(ImportanceSerializer(allow_null=True))
    def get_importance(self, sweep: Sweep) -> dict[str, Any] | None:
        """Each parameter's importance to the metric (Optuna's PED-ANOVA over the complete
        trials); null until there are enough of them."""
        records = [record_of(t) for t in self._trials(sweep)]
        values = study.importance(records, parse_space(sweep.space), sweep.direction)
        return {"method": study.IMPORTANCE_METHOD, "values": values} if values else None

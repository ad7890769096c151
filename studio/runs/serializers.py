"""Request and response shapes of the runs API (the views are in studio/api/runs/runs.py)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, cast

from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from studio.references.registry import request_fields
from studio.references.summary import RunInputsSerializer, run_inputs
from studio.runs.fair_share import QueueEntry
from studio.runs.models import Run, RunAttempt, RunStatus, RunStatusChange
from studio.runs.queue import queue_view
from studio.runs.startup import timeline
from studio.telemetry.series.reward_errors import reward_error_rates
from studio.telemetry.series.sparklines import SPARKLINE_KEY, SPARKLINE_POINTS, reward_sparklines
from trainer.config import preset_names
from trainer.reporting.startup import PHASES

MAX_TAGS = 32
MAX_TAG_LENGTH = 64
MAX_NOTES = 10_000
MAX_OVERRIDES = 200
PRIORITY_MIN, PRIORITY_MAX = -1000, 1000
EDITABLE_FIELDS = ("name", "notes", "tags", "priority")


def _tags() -> serializers.ListField:
    return serializers.ListField(
        child=serializers.CharField(max_length=MAX_TAG_LENGTH, min_length=1),
        max_length=MAX_TAGS,
        required=False,
        help_text=f"Up to {MAX_TAGS} tags of at most {MAX_TAG_LENGTH} characters.",
    )


def _priority(required: bool = False) -> serializers.IntegerField:
    return serializers.IntegerField(
        min_value=PRIORITY_MIN,
        max_value=PRIORITY_MAX,
        required=required,
        help_text="Higher starts first; ties start in order of creation.",
    )


def _config() -> serializers.DictField:
    return serializers.DictField(
        required=False,
        help_text="A partial config tree (see /api/config/schema), applied over the preset.",
    )


def _overrides() -> serializers.ListField:
    return serializers.ListField(
        child=serializers.CharField(max_length=1000),
        max_length=MAX_OVERRIDES,
        required=False,
        help_text="Dotted `key=value` overrides applied last, e.g. `actor.optim.lr=1e-6`; "
        "verl-style keys such as `actor_rollout_ref.rollout.n=4` are translated.",
    )


def unique_tags(tags: list[str]) -> list[str]:
    return list(dict.fromkeys(t.strip() for t in tags if t.strip()))


class ResourcesSerializer(serializers.Serializer):
    """The run's whole request; defaults come from the config's `resources` section."""

    cpus = serializers.FloatField(min_value=0, max_value=100_000, required=False)
    gpus = serializers.FloatField(min_value=0, max_value=10_000, required=False)
    memory_gb = serializers.FloatField(min_value=0, max_value=1_000_000, required=False)


class RunInputsRequestSerializer(serializers.Serializer):
    """The run's inputs, each a resource of the run's project, by id (never a path)."""

    def get_fields(self) -> dict[str, serializers.Field]:
        # Each input kind's request fields (studio.references.kinds), before the request's own.
        return {**request_fields(), **super().get_fields()}


class RunCreateSerializer(RunInputsRequestSerializer):
    project = serializers.SlugField(max_length=100, help_text="The project's slug.")
    name = serializers.CharField(max_length=200)
    preset = serializers.ChoiceField(choices=preset_names(), required=False, allow_blank=True)
    config = _config()
    overrides = _overrides()
    priority = _priority()
    resources = ResourcesSerializer(required=False)
    tags = _tags()
    notes = serializers.CharField(max_length=MAX_NOTES, required=False, allow_blank=True)


class RunCloneSerializer(RunInputsRequestSerializer):
    """A clone keeps the parent's inputs except those the request names."""

    name = serializers.CharField(max_length=200, required=False)
    config = _config()
    overrides = _overrides()
    priority = _priority()
    resources = ResourcesSerializer(required=False)
    tags = _tags()
    notes = serializers.CharField(max_length=MAX_NOTES, required=False, allow_blank=True)


class RunUpdateSerializer(serializers.Serializer):
    """Only these can change; the config is immutable (clone the run instead)."""

    name = serializers.CharField(max_length=200, required=False)
    notes = serializers.CharField(max_length=MAX_NOTES, required=False, allow_blank=True)
    tags = _tags()
    priority = _priority()

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            fixed = sorted(set(data) - set(EDITABLE_FIELDS))
            if fixed:
                message = (
                    "cannot be changed after creation; only "
                    f"{', '.join(EDITABLE_FIELDS)} can. Clone the run to change its config."
                )
                raise serializers.ValidationError({key: [message] for key in fixed})
        return super().to_internal_value(data)


class PrioritySerializer(serializers.Serializer):
    priority = _priority(required=True)


class ReasonSerializer(serializers.Serializer):
    reason = serializers.CharField(
        max_length=500, required=False, allow_blank=True, help_text="Shown in the run's history."
    )


class DeletedRunSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="The deleted run's id.")
    name = serializers.CharField()
    freed_bytes = serializers.IntegerField(
        help_text="Bytes its files took, measured as it was deleted; they are removed."
    )


class StatusChangeSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor.username", default=None, read_only=True)

    class Meta:
        model = RunStatusChange
        fields = ["from_status", "to_status", "reason", "actor", "at"]


class NodeShareSerializer(serializers.Serializer[dict[str, Any]]):
    """studio.runs.jobs.NodeShare: what one Ray node holds for an attempt."""

    node_id = serializers.CharField(help_text="Ray's node id.")
    node_ip = serializers.CharField(help_text="The node's address in the Ray cluster.")
    entrypoint = serializers.BooleanField(
        help_text="The job's entrypoint runs here (a distributed run's controller)."
    )
    workers = serializers.IntegerField(help_text="Trainer workers (FSDP ranks) placed here.")
    cpus = serializers.FloatField(help_text="CPUs reserved here for the attempt.")
    gpus = serializers.FloatField(help_text="GPUs reserved here for the attempt.")
    memory_gb = serializers.FloatField(help_text="Memory reserved here for the attempt, GiB.")


class StartupPhaseSerializer(serializers.Serializer[Any]):
    """studio.runs.startup.PhaseMark."""

    name = serializers.ChoiceField(choices=PHASES)
    at = serializers.FloatField(allow_null=True, help_text="Unix seconds; null: not reached.")
    seconds = serializers.FloatField(
        allow_null=True,
        help_text="Since the phase reached just before this one in time (null: the first).",
    )
    offset_s = serializers.FloatField(allow_null=True, help_text="Seconds since `created`.")


class StartupSerializer(serializers.Serializer[Any]):
    phases = StartupPhaseSerializer(
        many=True,
        help_text="Every phase: those reached, in the order they happened, then the rest.",
    )
    total_s = serializers.FloatField(
        allow_null=True, help_text="Create -> first metric stored; null until both are known."
    )


class AttemptSerializer(serializers.ModelSerializer):
    placement = NodeShareSerializer(
        many=True,
        read_only=True,
        help_text="Where Ray put the attempt, one entry per node: read from Ray while the "
        "job runs (empty until then, or if it ended before it was read).",
    )
    startup = serializers.SerializerMethodField(
        help_text="Its startup timeline (docs/operations.md); null for attempts from "
        "before it was recorded."
    )

    class Meta:
        model = RunAttempt
        fields = [
            "number",
            "submission_id",
            "resume_from_step",
            "created_at",
            "started_at",
            "finished_at",
            "ray_status",
            "exit_message",
            "placement",
            "startup",
        ]

    @extend_schema_field(StartupSerializer(allow_null=True))
    def get_startup(self, attempt: RunAttempt) -> dict[str, Any] | None:
        shown = timeline(attempt.startup)
        return None if shown is None else asdict(shown)


class RunSerializer(serializers.ModelSerializer):
    project = serializers.CharField(source="project.slug", read_only=True)
    created_by = serializers.CharField(source="created_by.username", read_only=True)
    resources = ResourcesSerializer(read_only=True)
    tags = serializers.ListField(child=serializers.CharField(), read_only=True)
    queue_position = serializers.SerializerMethodField(
        help_text="A queued run's place in the cluster's queue (1 starts next); null otherwise."
    )
    waiting_for = serializers.SerializerMethodField(
        help_text='What a queued run waits for, e.g. "2 CPUs (1.0 free)"; null otherwise.'
    )
    duration_s = serializers.SerializerMethodField(
        help_text="Seconds from start to finish (to now while running); null before it starts."
    )
    inputs = serializers.SerializerMethodField(
        help_text="What the run uses: model, dataset version, validation data, reward "
        "version and reward models (each with its id, for links)."
    )
    reward_sparkline = serializers.SerializerMethodField(
        help_text=f"At most {SPARKLINE_POINTS} points of {SPARKLINE_KEY} over the run, "
        "oldest first ([] before the first step)."
    )
    reward_error_rate = serializers.SerializerMethodField(
        help_text="The share of scored rows whose reward function failed (0 to 1; the mean "
        "of its steps' reward/error_rate); null before the first step."
    )

    @extend_schema_field(RunInputsSerializer)
    def get_inputs(self, run: Run) -> dict[str, Any]:
        return run_inputs(run)

    def get_duration_s(self, run: Run) -> float | None:
        if run.started_at is None:
            return None
        return ((run.finished_at or timezone.now()) - run.started_at).total_seconds()

    def get_reward_sparkline(self, run: Run) -> list[float]:
        # One reading for every run of a list (its page is the parent's instance).
        context = cast(dict[str, Any], self.context)  # the root's own dict
        if "_sparklines" not in context:
            page = (
                self.parent.instance
                if isinstance(self.parent, serializers.ListSerializer)
                else None
            )
            runs = list(page) if page is not None else [run]
            context["_sparklines"] = reward_sparklines([r.pk for r in runs])
        lines: dict[int, list[float]] = context["_sparklines"]
        if run.pk not in lines:  # a run serialized outside the page it was read with
            lines.update(reward_sparklines([run.pk]))
        return lines[run.pk]

    def _page_runs(self, run: Run) -> list[Run]:
        page = self.parent.instance if isinstance(self.parent, serializers.ListSerializer) else None
        return list(page) if page is not None else [run]

    def get_reward_error_rate(self, run: Run) -> float | None:
        # One query for every run of a list, as for the sparklines.
        context = cast(dict[str, Any], self.context)
        if "_error_rates" not in context:
            context["_error_rates"] = reward_error_rates([r.pk for r in self._page_runs(run)])
        rates: dict[int, float | None] = context["_error_rates"]
        if run.pk not in rates:
            rates.update(reward_error_rates([run.pk]))
        return rates[run.pk]

    def _queue_entry(self, run: Run) -> QueueEntry | None:
        if run.status != RunStatus.QUEUED:
            return None
        # One reading of the queue per response, shared by every run in a list.
        context = cast(dict[str, Any], self.context)  # the root's own dict
        if "_queue" not in context:
            context["_queue"] = queue_view()
        entry: QueueEntry | None = context["_queue"].get(run.pk)
        return entry

    def get_queue_position(self, run: Run) -> int | None:
        entry = self._queue_entry(run)
        return entry.position if entry else None

    def get_waiting_for(self, run: Run) -> str | None:
        entry = self._queue_entry(run)
        return entry.waiting_for if entry else None

    class Meta:
        model = Run
        fields = [
            "id",
            "project",
            "name",
            "kind",
            "status",
            "status_reason",
            "priority",
            "preset",
            "model",
            "dataset_version",
            "validation",
            "validation_version",
            "reward_version",
            "reward_models",
            "inputs",
            "parent",
            "resources",
            "tags",
            "notes",
            "created_by",
            "created_at",
            "updated_at",
            "started_at",
            "finished_at",
            "queue_position",
            "waiting_for",
            "duration_s",
            "reward_sparkline",
            "reward_error_rate",
            "archived_at",
            "storage_bytes",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "archived_at": {"help_text": "When the run was archived (hidden from the list)."},
            "storage_bytes": {
                "help_text": "Bytes its files (checkpoints, spool) took when last measured "
                "(a checkpoint recorded, the run ended); what deleting it frees. Null "
                "until measured."
            },
        }


class RunSweepSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="The sweep (/api/sweeps/{id}/).")
    name = serializers.CharField()
    trial = serializers.IntegerField(help_text="The trial's number in its sweep.")


class RunDetailSerializer(RunSerializer):
    config = serializers.DictField(read_only=True, help_text="The full, validated RunConfig.")
    status_history = StatusChangeSerializer(many=True, read_only=True)
    attempts = AttemptSerializer(many=True, read_only=True)
    sweep = serializers.SerializerMethodField()

    class Meta(RunSerializer.Meta):
        fields = [
            *RunSerializer.Meta.fields,
            "config",
            "last_error",
            "status_history",
            "attempts",
            "sweep",
        ]
        read_only_fields = fields

    @extend_schema_field(RunSweepSerializer(allow_null=True))
    def get_sweep(self, run: Run) -> dict[str, Any] | None:
        """The sweep this run is a trial of, if any. Read through the reverse link the
        sweeps app declares (studio.sweeps.models.SweepTrial.run), which sits above this
        app and is never imported here."""
        trial = getattr(run, "sweep_trial", None)
        if trial is None:
            return None
        return {"id": trial.sweep_id, "name": trial.sweep.name, "trial": trial.number}


class ConfigRequestSerializer(serializers.Serializer):
    preset = serializers.ChoiceField(choices=preset_names(), required=False, allow_blank=True)
    config = _config()
    overrides = _overrides()


class IgnoredOverrideSerializer(serializers.Serializer):
    key = serializers.CharField(help_text="The verl override, e.g. `trainer.logger`.")
    reason = serializers.CharField(help_text="Why it has no effect here.")


class ConfigValidationSerializer(serializers.Serializer):
    valid = serializers.BooleanField()
    config = serializers.DictField(
        required=False, help_text="The full resolved config, when valid."
    )
    ignored = IgnoredOverrideSerializer(
        many=True,
        required=False,
        help_text="verl overrides accepted with no effect here (speed-only settings, ...), "
        "each once with the reason; when valid.",
    )
    # Shadows Serializer.errors on the class only; this serializer just documents a response.
    errors = serializers.DictField(  # type: ignore[assignment]
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text='Messages by config path, e.g. {"config.actor.optim.lr": [...]}.',
    )


class PresetSerializer(serializers.Serializer):
    name = serializers.CharField()
    config = serializers.DictField(help_text="The preset applied over the defaults, in full.")

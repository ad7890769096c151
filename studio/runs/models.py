"""Runs, their attempts, status history and checkpoints, and the trainer's per-run ingest
tokens."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from studio.datasets.models import DatasetVersion
from studio.projects.models import Project


class RunStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    STARTING = "starting", "Starting"
    RUNNING = "running", "Running"
    CANCELLING = "cancelling", "Cancelling"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


# What a run validates on (studio.references.kinds.validation).
RUN_VALIDATION = [
    ("held_out", "Held-out rows of the training version"),
    ("dataset_version", "Another dataset version"),
    ("none", "No validation"),
]


class RunKind(models.TextChoices):
    TRAIN = "train", "Training run"
    # Models answer a dataset's prompts and are scored (trainer.evaluation, docs/evaluate.md).
    EVALUATION = "evaluation", "Evaluation"


TERMINAL_STATUSES = frozenset({RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.CANCELLED})


class Run(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="runs")
    name = models.CharField(max_length=200)
    kind = models.CharField(
        max_length=16, choices=RunKind.choices, default=RunKind.TRAIN, db_default=RunKind.TRAIN
    )
    config = models.JSONField()  # a validated trainer.config.RunConfig, dumped as JSON
    preset = models.CharField(max_length=64, blank=True)
    dataset_version = models.ForeignKey(
        DatasetVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="runs"
    )
    reward_version = models.ForeignKey(
        # By label: the rewards app sits above this one (a test-run samples a checkpoint).
        "rewards.RewardVersion",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="runs",
    )
    # The run's inputs (studio.references.run_inputs). `model` and `dataset_version` are
    # null only on a run kept as a provenance record (`provenance`), whose files are gone.
    model = models.ForeignKey(
        "model_registry.RegisteredModel",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="runs",
    )
    validation = models.CharField(max_length=16, choices=RUN_VALIDATION, default="held_out")
    validation_version = models.ForeignKey(
        DatasetVersion,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="validated_runs",
    )
    reward_models = models.JSONField(default=dict, blank=True)  # config place -> model id
    # A run stored before runs referenced resources whose files matched no stored version
    # and were gone when it was brought to references (studio.references.stored_runs):
    # {"paths": {config place: what its config named}, "missing": [why, per place]}. It
    # is shown with the run's inputs and never launched, resumed or cloned
    # (studio.runs.provenance). A column, not a model of its own: it is read with every
    # view of the run's inputs, written once, never queried by content.
    provenance = models.JSONField(null=True, blank=True, default=None)
    status = models.CharField(
        max_length=16, choices=RunStatus.choices, default=RunStatus.QUEUED, db_index=True
    )
    status_reason = models.TextField(blank=True)
    priority = models.IntegerField(default=0)  # orders the project's own runs; ties by age
    # Dispatches in which other runs took what this queued run waited for; at
    # RLSTUDIO_QUEUE_RESERVE_AFTER_PASSES it reserves resources (studio.runs.fair_share).
    queue_passes = models.PositiveIntegerField(default=0, db_default=0)
    resources = models.JSONField(default=dict)  # {"cpus": .., "gpus": .., "memory_gb": ..}
    tags = models.JSONField(default=list, blank=True)
    notes = models.TextField(blank=True)
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="clones"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)  # the trainer's last error lines
    # Hidden from the runs list (GET /api/runs/?archived=...) when set; still read by id.
    # Archiving frees nothing: deleting does (studio.runs.deletion).
    archived_at = models.DateTimeField(null=True, blank=True)
    # Bytes of the run's files (its checkpoint folder and spool), measured when a
    # checkpoint is recorded and when the run ends (studio.runs.run_files); null until
    # first measured. The project's storage (studio.runs.quota) sums these, so showing
    # it never walks every run's folder.
    storage_bytes = models.BigIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "-priority", "created_at"])]

    def __str__(self) -> str:
        return self.name


class RunStatusChange(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="status_history")
    from_status = models.CharField(max_length=16, choices=RunStatus.choices, blank=True)
    to_status = models.CharField(max_length=16, choices=RunStatus.choices)
    reason = models.TextField(blank=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["run", "at", "id"]


class RunAttempt(models.Model):
    """One submission of a run to Ray; a resume is a new attempt."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="attempts")
    number = models.PositiveIntegerField()
    submission_id = models.CharField(max_length=100, unique=True)  # Ray job submission id
    resume_from_step = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    ray_status = models.CharField(max_length=32, blank=True)
    exit_message = models.TextField(blank=True)
    # Where Ray put the attempt, per node (studio.runs.jobs.NodeShare as dicts), read
    # from Ray by reconcile_runs once the job runs and its workers are placed.
    placement = models.JSONField(default=list, blank=True)
    # When the trainer redeemed the job's one-time secret (studio.runs.bootstrap); it is
    # refused after that.
    bootstrapped_at = models.DateTimeField(null=True, blank=True)
    # The startup timeline (studio.runs.startup): phase name -> unix seconds, the first
    # time the attempt reached it, marked by the studio and by its trainer. `{}` on
    # attempts from before it was recorded.
    startup = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["run", "number"]
        constraints = [
            models.UniqueConstraint(fields=["run", "number"], name="attempt_number_per_run")
        ]


class IngestToken(models.Model):
    """Lets one trainer attempt write telemetry for its own run, until the run ends."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="ingest_tokens")
    attempt = models.ForeignKey(RunAttempt, on_delete=models.CASCADE, related_name="+")
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    revoked_at = models.DateTimeField(null=True, blank=True)


class Checkpoint(models.Model):
    """A checkpoint the trainer reported for a run (studio.runs.checkpoints says where it
    is and whether the studio may serve it)."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="checkpoints")
    attempt = models.PositiveIntegerField()
    step = models.PositiveIntegerField()
    uri = models.CharField(max_length=500)  # local path or fsspec URL
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        # The table keeps the name it was created with in the telemetry app (migration
        # runs.0006 moved the model here without touching the data).
        db_table = "telemetry_checkpoint"
        ordering = ["run", "step"]
        constraints = [
            models.UniqueConstraint(fields=["run", "attempt", "step"], name="checkpoint_once")
        ]

"""A sweep, its trials (each one run) and the pruner's recorded decisions."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from studio.projects.models import Project
from studio.runs.models import Run


class SweepMethod(models.TextChoices):
    RANDOM = "random", "Random search"
    GRID = "grid", "Grid search"
    TPE = "tpe", "Bayesian (TPE)"


class SweepStatus(models.TextChoices):
    RUNNING = "running", "Running"  # asks for trials while slots are free
    PAUSED = "paused", "Paused"  # asks for none; its live trials go on
    STOPPED = "stopped", "Stopped"  # its live trials were cancelled; final
    FINISHED = "finished", "Finished"  # every trial of the budget has ended


class Direction(models.TextChoices):
    MAXIMIZE = "maximize", "Maximize"
    MINIMIZE = "minimize", "Minimize"


class Sweep(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="sweeps")
    name = models.CharField(max_length=200)
    # The base every trial starts from: a run to clone, or a preset with a config request
    # (`base_request`: config, overrides and input fields, as a run's create request).
    # Protected: a trial asked for later is a clone of it, so it stays while the sweep does.
    base_run = models.ForeignKey(
        Run, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    preset = models.CharField(max_length=64, blank=True)
    base_request = models.JSONField(default=dict, blank=True)
    # The base's resolved config tree when the sweep was created: what the best trial's
    # config is compared with.
    base_config = models.JSONField(default=dict)
    space = models.JSONField()  # a list of studio.sweeps.space parameters, as posted
    method = models.CharField(max_length=8, choices=SweepMethod.choices)
    seed = models.IntegerField(default=0)
    metric = models.CharField(max_length=200, blank=True)  # "": the validation score
    direction = models.CharField(
        max_length=8, choices=Direction.choices, default=Direction.MAXIMIZE
    )
    metric_reward = models.CharField(max_length=64, blank=True)  # reward.validation_function
    max_trials = models.PositiveIntegerField()
    parallelism = models.PositiveIntegerField(default=1)
    pruner = models.JSONField(default=dict)  # studio.sweeps.pruning.PrunerSpec as a dict
    stop_on_critical_alert = models.BooleanField(default=True)
    status = models.CharField(
        max_length=8, choices=SweepStatus.choices, default=SweepStatus.RUNNING, db_index=True
    )
    status_reason = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name


class TrialState(models.TextChoices):
    RUNNING = "running", "Running"  # its run is queued or training
    COMPLETE = "complete", "Complete"
    PRUNED = "pruned", "Pruned"  # stopped by the pruner
    STOPPED = "stopped", "Stopped"  # stopped for a critical alert, or with its sweep
    FAILED = "failed", "Failed"  # its run failed, was cancelled, or reported no metric


LIVE_TRIAL_STATES = frozenset({TrialState.RUNNING})


class SweepTrial(models.Model):
    """One trial: the parameters Optuna chose and the run made with them. Numbers are
    0, 1, 2, ... per sweep (Optuna's), unique, so a retried ask can't add a trial twice."""

    sweep = models.ForeignKey(Sweep, on_delete=models.CASCADE, related_name="trials")
    number = models.PositiveIntegerField()
    # Null when the base refused the trial's parameters (stop_reason says why) or the run
    # was deleted since; the trial stays, so the sweep's numbering and budget hold.
    run = models.OneToOneField(
        Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="sweep_trial"
    )
    params = models.JSONField()  # parameter name -> value
    state = models.CharField(
        max_length=8, choices=TrialState.choices, default=TrialState.RUNNING, db_index=True
    )
    value = models.FloatField(null=True, blank=True)  # the metric it ended with
    # step -> metric value, as reported to the pruner (JSON keys are strings)
    intermediate = models.JSONField(default=dict)
    # What the pruner keeps per trial between decisions (ASHA's completed rungs).
    system_attrs = models.JSONField(default=dict)
    stopped_at_step = models.IntegerField(null=True, blank=True)
    stop_reason = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["sweep", "number"]
        constraints = [
            models.UniqueConstraint(fields=["sweep", "number"], name="trial_number_per_sweep")
        ]


class PrunerDecision(models.Model):
    """Each time the pruner was asked about a trial at a step, and what it said."""

    trial = models.ForeignKey(SweepTrial, on_delete=models.CASCADE, related_name="decisions")
    step = models.IntegerField()
    value = models.FloatField()
    pruned = models.BooleanField()
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["trial", "step"]
        constraints = [
            models.UniqueConstraint(fields=["trial", "step"], name="one_decision_per_step")
        ]

"""Reward functions with immutable, hashed versions that runs pin."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from studio.projects.models import Project, ProjectResource


class RewardFunction(ProjectResource):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="reward_functions")

    class Meta(ProjectResource.Meta):
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="reward_name_per_project")
        ]


class RewardVersion(models.Model):
    function = models.ForeignKey(RewardFunction, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    code = models.TextField()
    code_hash = models.CharField(max_length=64)  # sha256 of `code`
    entrypoint = models.CharField(max_length=100, default="compute_score")
    message = models.CharField(max_length=300, blank=True)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["function", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["function", "number"], name="reward_version_number")
        ]

    def __str__(self) -> str:
        return f"{self.function.name} v{self.number}"


class RewardTestRun(models.Model):
    """One test-run of a reward version: rows to score, where their responses come from,
    progress while it runs (a worker task or, for small inputs, the request itself), and
    the per-row results with their summary. Belongs to the version's project."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    class Source(models.TextChoices):
        REFERENCES = "references", "dataset rows answered by their reference answers"
        COMPLETIONS = "completions", "pasted completions"
        DEMO_MODEL = "demo_model", "dataset prompts answered by the demo model"
        CHECKPOINT = "checkpoint", "dataset prompts answered by a run's checkpoint"

    class Phase(models.TextChoices):
        QUEUED = "queued"
        READING = "reading"  # dataset rows
        SAMPLING = "sampling"  # progress counts completions generated
        SCORING = "scoring"  # progress counts rows scored
        DONE = "done"

    version = models.ForeignKey(RewardVersion, on_delete=models.CASCADE, related_name="test_runs")
    source = models.CharField(max_length=16, choices=Source.choices)
    dataset_version = models.ForeignKey(
        "datasets.DatasetVersion",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    checkpoint = models.ForeignKey(
        "runs.Checkpoint", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The validated request without the pasted completions (studio.rewards.testruns.Params).
    params = models.JSONField(default=dict)
    completions = models.JSONField(null=True, blank=True)  # source "completions" only
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    phase = models.CharField(max_length=16, choices=Phase.choices, default=Phase.QUEUED)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    result = models.JSONField(null=True, blank=True)  # rows, summary, isolation, load_error
    error = models.TextField(blank=True)  # why it failed, for the user
    error_code = models.CharField(max_length=32, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Set when claimed: a test-run still running after this is failed by whoever looks
    # next (its worker was killed or lost), so none stays "running" forever.
    deadline = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["version", "-created_at"]),
            models.Index(
                fields=["created_at"],
                name="reward_test_queued",
                condition=models.Q(status="queued"),
            ),
            models.Index(
                fields=["deadline"],
                name="reward_test_running",
                condition=models.Q(status="running"),
            ),
        ]

    def __str__(self) -> str:
        return f"test-run {self.pk} of {self.version}"

    @property
    def project(self) -> Project:
        """The version's project (what permissions and scoping follow)."""
        return self.version.function.project

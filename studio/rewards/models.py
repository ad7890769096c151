"""Reward functions with immutable, hashed versions that runs pin."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from studio.projects.models import Project


class RewardFunction(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="reward_functions")
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="reward_name_per_project")
        ]

    def __str__(self) -> str:
        return self.name


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

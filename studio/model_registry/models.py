"""A project's models: what a run trains, or scores with, chosen by id, never by path.

A model is one of: a demo model the studio builds offline (`demo`), a folder under one of
the server's configured model roots (`server`, RLSTUDIO_MODEL_ROOTS), the Hugging Face
export of a checkpoint of one of the project's runs (`checkpoint`), or a hub model a
worker downloads into the studio's model cache (`hub`, studio.model_registry.hub). Where its
files are is decided on the server (studio.model_registry.locations), from the kind and the
fields below, every time it is used.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from studio.model_registry.inspect import ModelInfo
from studio.projects.models import Project
from studio.runs.models import Checkpoint


class ModelKind(models.TextChoices):
    DEMO = "demo", "Demo model"
    SERVER = "server", "Server folder"
    CHECKPOINT = "checkpoint", "Run checkpoint"
    HUB = "hub", "Hugging Face hub"


class ModelStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    DOWNLOADING = "downloading", "Downloading"
    READY = "ready", "Ready"
    FAILED = "failed", "Failed"


class ModelRole(models.TextChoices):
    POLICY = "policy", "Policy (causal LM)"
    REWARD = "reward", "Reward model (sequence classifier)"
    # A peft LoRA adapter folder (adapter_config.json + weights): not a model by itself, it
    # is what a run's actor starts from on its own model (`lora_adapter`, docs/resources.md).
    ADAPTER = "adapter", "LoRA adapter (peft)"


def role_of(info: ModelInfo) -> str:
    """The role a folder's facts give it: adapter, reward (a sequence classifier) or policy."""
    if info.adapter is not None:
        return ModelRole.ADAPTER
    return ModelRole.REWARD if info.reward_model else ModelRole.POLICY


class RegisteredModel(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="models")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=ModelKind.choices)
    role = models.CharField(max_length=16, choices=ModelRole.choices)
    # demo: the asset's folder name under the var dir; server: the folder relative to
    # `root` (one of RLSTUDIO_MODEL_ROOTS when it was added; still one when used).
    root = models.CharField(max_length=1000, blank=True)
    relative_path = models.CharField(max_length=1000, blank=True)
    checkpoint = models.ForeignKey(
        Checkpoint, null=True, blank=True, on_delete=models.PROTECT, related_name="models"
    )
    # hub: the repository id and revision asked for; the download's state and progress
    # ({"files_done", "files_total", "bytes_done", "bytes_total"}), or why it failed.
    hub_id = models.CharField(max_length=200, blank=True)
    revision = models.CharField(max_length=100, blank=True)
    status = models.CharField(
        max_length=16, choices=ModelStatus.choices, default=ModelStatus.READY, db_index=True
    )
    progress = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)  # a worker downloads it until
    # What the folder held when it was added (studio.model_registry.inspect.ModelInfo).
    info = models.JSONField(default=dict)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["project", "name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="model_name_per_project")
        ]

    def __str__(self) -> str:
        return self.name

"""Projects own everything; members have roles; scripts authenticate with API tokens."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone


class Role(models.TextChoices):
    OWNER = "owner", "Owner"  # manages members and deletes the project
    MEMBER = "member", "Member"  # creates and changes datasets, rewards, runs, labels
    VIEWER = "viewer", "Viewer"  # reads only


class Project(models.Model):
    name = models.CharField(max_length=100)
    slug = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="projects"
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "user"], name="one_membership_per_user")
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.project} ({self.role})"


TOKEN_PREFIX_LENGTH = 8


def hash_token(raw: str) -> str:
    """Tokens are random (256 bits), so one round of SHA-256 is enough; no salt needed."""
    return hashlib.sha256(raw.encode()).hexdigest()


class ApiToken(models.Model):
    """A personal token for scripts: shown once, stored hashed, revocable, may expire."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=TOKEN_PREFIX_LENGTH, db_index=True)
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @classmethod
    def issue(
        cls, user: models.Model, name: str, expires_at: datetime | None = None
    ) -> tuple[ApiToken, str]:
        """Create a token; the raw value is returned once and never stored."""
        raw = "rls_" + secrets.token_urlsafe(32)
        token = cls.objects.create(
            user=user,
            name=name,
            prefix=raw[4 : 4 + TOKEN_PREFIX_LENGTH],
            token_hash=hash_token(raw),
            expires_at=expires_at,
        )
        return token, raw

    @property
    def is_active(self) -> bool:
        now = timezone.now()
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)


class AuditEvent(models.Model):
    """Who created, changed, cancelled or labelled what, and when."""

    project = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.CASCADE, related_name="audit_events"
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    action = models.CharField(max_length=64)  # e.g. "run.create", "sample.label"
    object_type = models.CharField(max_length=64)
    object_id = models.CharField(max_length=64)
    detail = models.JSONField(default=dict, blank=True)
    at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-at"]
        indexes = [models.Index(fields=["project", "-at"])]

    def __str__(self) -> str:
        return f"{self.action} {self.object_type}:{self.object_id}"

    @classmethod
    def record(
        cls, action: str, obj: models.Model, project: Project | None, actor: Any, **detail: Any
    ) -> AuditEvent:
        """`actor` did `action` to `obj` (an anonymous actor is recorded as None)."""
        return cls.objects.create(
            project=project,
            actor=actor if getattr(actor, "is_authenticated", False) else None,
            action=action,
            object_type=obj._meta.model_name or "",
            object_id=str(obj.pk),
            detail=detail,
        )


class ProjectResource(models.Model):
    """A named resource a project owns, with immutable numbered versions (datasets,
    reward functions). Each subclass declares its `project` foreign key (for its
    reverse name) and its name-per-project constraint."""

    project: models.ForeignKey[Project, Project]
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        abstract = True
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def change(self, changes: dict[str, str]) -> None:
        """Rename or describe it (its versions never change)."""
        type(self)._default_manager.filter(pk=self.pk).update(**changes)

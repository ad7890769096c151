"""Projects own everything; members have roles; scripts authenticate with API tokens."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models.functions import Lower
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


class NotificationEvent(models.TextChoices):
    """What a project can tell people outside the browser."""

    RUN_SUCCEEDED = "run_succeeded", "A run finished"
    RUN_FAILED = "run_failed", "A run failed"
    CRITICAL_ALERT = "critical_alert", "A critical alert"


class Membership(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(default=timezone.now)
    # The events this member is emailed about (NotificationEvent values): their choice.
    email_events = models.JSONField(default=list, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "user"], name="one_membership_per_user")
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.project} ({self.role})"


TOKEN_PREFIX_LENGTH = 8


class TokenScope(models.TextChoices):
    """What a personal token may do, on top of what its user may do (a password session has
    every scope). Enforced by `studio.api.common.permissions.require_token_scope`."""

    READ = "read", "Read"  # every GET its user may make; always granted
    WRITE = "write", "Write"  # any POST, PUT, PATCH or DELETE
    MEMBERS = "members", "Manage members"  # owner actions: members, invitations, the project


ALL_SCOPES = (TokenScope.READ, TokenScope.WRITE, TokenScope.MEMBERS)
DEFAULT_SCOPES = (TokenScope.READ, TokenScope.WRITE)  # a new token's, when none are named


def default_token_scopes() -> list[str]:
    return [str(scope) for scope in DEFAULT_SCOPES]


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
    scopes = ArrayField(
        models.CharField(max_length=16, choices=TokenScope.choices), default=default_token_scopes
    )

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @classmethod
    def issue(
        cls,
        user: models.Model,
        name: str,
        expires_at: datetime | None = None,
        scopes: Iterable[TokenScope] = ALL_SCOPES,
    ) -> tuple[ApiToken, str]:
        """Create a token; the raw value is returned once and never stored. Callers in
        Python (tests, the shell) get every scope unless they name some; the API's create
        defaults to DEFAULT_SCOPES."""
        raw = "rls_" + secrets.token_urlsafe(32)
        token = cls.objects.create(
            user=user,
            name=name,
            prefix=raw[4 : 4 + TOKEN_PREFIX_LENGTH],
            token_hash=hash_token(raw),
            expires_at=expires_at,
            scopes=[str(s) for s in ALL_SCOPES if s in {*scopes, TokenScope.READ}],
        )
        return token, raw

    def allows(self, scope: TokenScope) -> bool:
        return scope == TokenScope.READ or scope in self.scopes

    @property
    def is_active(self) -> bool:
        now = timezone.now()
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)


INVITATION_LIFETIME = timedelta(days=14)


def invitation_expiry() -> datetime:
    return timezone.now() + INVITATION_LIFETIME


class InvitationStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    ACCEPTED = "accepted", "Accepted"
    DECLINED = "declined", "Declined"
    REVOKED = "revoked", "Revoked"


class InvitationQuerySet(models.QuerySet["Invitation"]):
    def open(self) -> InvitationQuerySet:
        return self.filter(status=InvitationStatus.PENDING, expires_at__gt=timezone.now())

    def addressed_to(self, user: Any) -> InvitationQuerySet:
        """Open invitations to `user`'s username, matched case-insensitively."""
        return self.open().filter(username__iexact=user.username)


class Invitation(models.Model):
    """An owner's offer of a role in a project, which its addressee accepts or declines.

    `username` is kept as typed, not as a user: an invitation to a name nobody has is
    stored and answered exactly like one to a real user, so inviting reveals nothing
    about which accounts exist, and nobody joins a project without consenting.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="invitations")
    username = models.CharField(max_length=150)
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(default=invitation_expiry)
    status = models.CharField(
        max_length=16, choices=InvitationStatus.choices, default=InvitationStatus.PENDING
    )
    responded_at = models.DateTimeField(null=True, blank=True)  # accepted, declined, revoked

    objects = InvitationQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                Lower("username"),
                "project",
                condition=models.Q(status="pending"),
                name="one_pending_invitation_per_username",
            )
        ]

    def __str__(self) -> str:
        return f"{self.username} to {self.project} ({self.role}, {self.status})"


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


class ProjectWebhook(models.Model):
    """Where a project posts its notifications (JSON that chat tools accept), and which.
    Set by its owners; the URL is checked against private addresses when set and again
    before every post (studio.projects.webhooks)."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="webhook")
    url = models.URLField(max_length=500, blank=True)
    events = models.JSONField(default=list, blank=True)  # NotificationEvent values
    updated_at = models.DateTimeField(auto_now=True)

"""Projects, their members and invitations, personal API tokens and the audit log."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.text import slugify
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from studio.api.common.errors import Conflict
from studio.api.common.permissions import signed_in_user
from studio.api.common.scoping import ProjectScopedViewSet
from studio.api.projects.invitations import InvitationSerializer, InviteSerializer, invite
from studio.datasets.models import DatasetVersion
from studio.datasets.versions import delete_files
from studio.projects.models import (
    ALL_SCOPES,
    ApiToken,
    AuditEvent,
    Invitation,
    InvitationStatus,
    Membership,
    NotificationEvent,
    Project,
    ProjectWebhook,
    Role,
    TokenScope,
    default_token_scopes,
)
from studio.projects.webhooks import WebhookRefused, checked_address
from studio.runs import run_files
from studio.runs.models import RunStatus
from studio.runs.quota import project_storage

# Runs whose Ray job may still be going: their project can't be deleted under them.
LIVE_STATUSES = (RunStatus.STARTING, RunStatus.RUNNING, RunStatus.CANCELLING)


class ProjectSerializer(serializers.ModelSerializer):
    role = serializers.SerializerMethodField(help_text="Your role in this project.")

    class Meta:
        model = Project
        fields = ["id", "name", "slug", "description", "created_at", "role"]
        read_only_fields = ["id", "slug", "created_at", "role"]

    def get_role(self, project: Project) -> str | None:
        user = self.context["request"].user
        membership = next((m for m in project.memberships.all() if m.user_id == user.pk), None)
        return membership.role if membership else None


class MembershipSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username", read_only=True)

    class Meta:
        model = Membership
        fields = ["id", "username", "role", "created_at"]
        read_only_fields = ["id", "username", "created_at"]


class MemberRoleSerializer(serializers.Serializer):
    """A member's new role. Only existing members: others are invited."""

    username = serializers.CharField(max_length=150)
    role = serializers.ChoiceField(choices=Role.choices)


class StorageByKindSerializer(serializers.Serializer):
    runs = serializers.IntegerField(help_text="Training runs' files (checkpoints, spools).")
    evaluations = serializers.IntegerField(help_text="Evaluations' files.")
    datasets = serializers.IntegerField(help_text="Dataset versions' files.")
    models = serializers.IntegerField(help_text="Hub models' downloads.")


class ProjectStorageSerializer(serializers.Serializer):
    used_bytes = serializers.IntegerField(help_text="Bytes the project's files take.")
    quota_bytes = serializers.IntegerField(
        help_text="RLSTUDIO_PROJECT_STORAGE_QUOTA_GB in bytes; 0: no quota."
    )
    over_quota = serializers.BooleanField(
        help_text="At or over the quota: new runs are refused until runs are deleted."
    )
    by_kind = StorageByKindSerializer()


# One answer for a username that no account has and for an account that isn't a member,
# so this endpoint can't be used to find out which usernames exist.
NOT_A_MEMBER = "{!r} is not a member of this project; invite them instead."


def refuse_over_project_cap(user_id: int) -> None:
    """400 when the user has created RLSTUDIO_USER_MAX_PROJECTS projects already (their
    runs share one per-user cap, but each project brings its own per-project cap)."""
    cap = settings.RLSTUDIO_USER_MAX_PROJECTS
    if not cap:
        return
    # The user's row, locked: two creates at once are counted one after the other.
    get_user_model().objects.select_for_update().filter(pk=user_id).first()
    created = Project.objects.filter(created_by_id=user_id).count()
    if created >= cap:
        raise exceptions.ValidationError(
            f"You have created {created} projects; the limit is {cap} per user "
            "(RLSTUDIO_USER_MAX_PROJECTS). Delete one you no longer need, or ask an "
            "administrator to raise the limit."
        )


# Owner-level: writing needs the owner role (and a token's `members` scope).
OWNER_ACTIONS = ("update", "partial_update", "destroy", "members", "invitations", "uninvite")


class NotificationsSerializer(serializers.Serializer):
    webhook_url = serializers.CharField(
        allow_null=True, help_text="The webhook (owners only; null for other members)."
    )
    webhook_set = serializers.BooleanField(help_text="Whether the project posts to a webhook.")
    webhook_events = serializers.ListField(child=serializers.CharField())
    email_events = serializers.ListField(
        child=serializers.CharField(), help_text="The events you are emailed about."
    )
    email_enabled = serializers.BooleanField(
        help_text="Whether this studio sends email at all (its operator set a mail server)."
    )
    events = serializers.DictField(
        child=serializers.CharField(), help_text="Every event, with its label."
    )


class NotificationsUpdateSerializer(serializers.Serializer):
    webhook_url = serializers.CharField(max_length=500, allow_blank=True, required=False)
    webhook_events = serializers.ListField(
        child=serializers.ChoiceField(choices=NotificationEvent.choices),
        max_length=len(NotificationEvent.choices),
        required=False,
    )
    email_events = serializers.ListField(
        child=serializers.ChoiceField(choices=NotificationEvent.choices),
        max_length=len(NotificationEvent.choices),
        required=False,
    )

    def validate_webhook_url(self, url: str) -> str:
        if url:
            try:
                checked_address(url)
            except WebhookRefused as exc:
                raise serializers.ValidationError(str(exc)) from None
        return url

    def validate_webhook_events(self, events: list[str]) -> list[str]:
        return sorted(set(events))

    def validate_email_events(self, events: list[str]) -> list[str]:
        return sorted(set(events))


def notifications_view(project: Project, membership: Membership) -> dict[str, Any]:
    hook = ProjectWebhook.objects.filter(project=project).first()
    owner = membership.role == Role.OWNER
    return {
        "webhook_url": (hook.url if hook else "") if owner else None,
        "webhook_set": bool(hook and hook.url),
        "webhook_events": hook.events if hook else [],
        "email_events": membership.email_events,
        "email_enabled": bool(settings.EMAIL_HOST),
        "events": dict(NotificationEvent.choices),
    }


class ProjectViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    mixins.DestroyModelMixin,
    ProjectScopedViewSet,
):
    """Projects you belong to. Creating one makes you its owner."""

    queryset = Project.objects.prefetch_related("memberships").order_by("name")
    serializer_class = ProjectSerializer
    lookup_field = "slug"
    project_path = "id"  # a project is its own project

    def get_permissions(self) -> Any:
        if self.action in OWNER_ACTIONS:
            self.write_role = Role.OWNER
        elif self.action == "notifications":
            self.write_role = Role.VIEWER  # everyone picks their own emails; owners the webhook
        return super().get_permissions()

    @transaction.atomic
    def perform_create(self, serializer: serializers.BaseSerializer[Project]) -> None:
        user = signed_in_user(self.request)
        refuse_over_project_cap(user.pk)
        base = slugify(serializer.validated_data["name"])[:90] or "project"
        slug, n = base, 1
        while Project.objects.filter(slug=slug).exists():
            n += 1
            slug = f"{base}-{n}"
        project = serializer.save(slug=slug, created_by=user)
        Membership.objects.create(project=project, user=user, role=Role.OWNER)
        self.audit("project.create", project, project)

    @extend_schema(responses={204: None, 409: OpenApiResponse(description="Runs are live.")})
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Delete the project with everything in it (owners only). Refused while any of
        its runs is starting, running or cancelling: cancel those first."""
        return super().destroy(request, *args, **kwargs)

    def perform_destroy(self, instance: Project) -> None:
        live = list(instance.runs.filter(status__in=LIVE_STATUSES).values_list("name", flat=True))
        if live:
            raise Conflict(
                f"Project {instance.slug!r} has live runs ({', '.join(sorted(live)[:5])}); "
                "cancel them and wait for them to stop first."
            )
        files = list(
            DatasetVersion.objects.filter(dataset__project=instance).values_list("file", flat=True)
        )
        run_ids = list(instance.runs.values_list("pk", flat=True))
        with transaction.atomic():
            # Kept without a project, so the event outlives the project's cascade.
            AuditEvent.objects.create(
                project=None,
                actor=signed_in_user(self.request),
                action="project.delete",
                object_type="project",
                object_id=str(instance.pk),
                detail={"name": instance.name, "slug": instance.slug},
            )
            # Runs pin dataset and reward versions (PROTECT): they go first.
            instance.runs.all().delete()
            instance.delete()
            transaction.on_commit(lambda: delete_files(files))
            # Its runs' checkpoint folders and spools go with their rows.
            transaction.on_commit(lambda: run_files.remove_each(run_ids))

    @extend_schema(request=MemberRoleSerializer, responses=MembershipSerializer(many=True))
    @action(
        detail=True,
        methods=["get", "post"],
        serializer_class=MembershipSerializer,
        pagination_class=None,  # every member, unpaged (as the schema says)
    )
    def members(self, request: Request, slug: str | None = None) -> Response:
        """List members (any role) or change a member's role (owners only). Someone who
        isn't a member is invited instead (`invitations`), and must accept."""
        project = self.get_object()  # viewers may read; writing needs the owner role
        if request.method == "POST":
            serializer = MemberRoleSerializer(data=request.data)
            serializer.is_valid(raise_exception=True)
            username, role = (
                serializer.validated_data["username"],
                serializer.validated_data["role"],
            )
            membership = project.memberships.filter(user__username=username).first()
            if membership is None:
                raise serializers.ValidationError({"username": [NOT_A_MEMBER.format(username)]})
            membership.role = role
            membership.save(update_fields=["role"])
            self.audit("member.set", membership, project, role=role)
        members = project.memberships.select_related("user").order_by("id")
        return Response(MembershipSerializer(members, many=True).data)

    @extend_schema(responses=ProjectStorageSerializer)
    @action(detail=True, methods=["get"], pagination_class=None)
    def storage(self, request: Request, slug: str | None = None) -> Response:
        """What the project's files take (runs, evaluations, datasets, hub models) and its
        storage quota (any role). At or over the quota its new runs are refused; deleting
        runs frees space, archiving does not."""
        storage = project_storage(self.get_object())
        return Response(
            ProjectStorageSerializer(
                {
                    "used_bytes": storage.used_bytes,
                    "quota_bytes": storage.quota_bytes,
                    "over_quota": storage.over_quota,
                    "by_kind": storage.by_kind,
                }
            ).data
        )

    @extend_schema(
        methods=["PUT"], request=NotificationsUpdateSerializer, responses=NotificationsSerializer
    )
    @extend_schema(methods=["GET"], responses=NotificationsSerializer)
    @action(detail=True, methods=["get", "put"], pagination_class=None)
    def notifications(self, request: Request, slug: str | None = None) -> Response:
        """What the project sends outside the browser: its webhook (owners set it and its
        events; other members see only whether one is set) and the events you are emailed
        about (your own choice, any role). PUT changes the fields it names."""
        project = self.get_object()
        user = signed_in_user(request)
        membership = project.memberships.get(user=user)
        if request.method == "PUT":
            update = NotificationsUpdateSerializer(data=request.data)
            update.is_valid(raise_exception=True)
            v = update.validated_data
            if "webhook_url" in v or "webhook_events" in v:
                self.require_role(project, Role.OWNER)
                hook, _ = ProjectWebhook.objects.get_or_create(project=project)
                hook.url = v.get("webhook_url", hook.url)
                hook.events = v.get("webhook_events", hook.events)
                hook.save()
                self.audit("project.webhook", project, project, events=hook.events)
            if "email_events" in v:
                membership.email_events = v["email_events"]
                membership.save(update_fields=["email_events"])
        return Response(notifications_view(project, membership))

    @extend_schema(methods=["GET"], responses=InvitationSerializer(many=True))
    @extend_schema(
        methods=["POST"], request=InviteSerializer, responses={201: InvitationSerializer}
    )
    @action(
        detail=True,
        methods=["get", "post"],
        serializer_class=InvitationSerializer,
        pagination_class=None,
    )
    def invitations(self, request: Request, slug: str | None = None) -> Response:
        """Open invitations (owners only), or invite a username. The answer is the same
        (201, the invitation) whether or not an account has that username; inviting the
        same name again refreshes its invitation."""
        project = self.get_object()
        self.require_role(project, Role.OWNER)  # reading them too: owners' business
        if request.method == "POST":
            serializer = InviteSerializer(data=request.data)
            serializer.is_valid(raise_exception=True)
            username, role = (
                serializer.validated_data["username"],
                serializer.validated_data["role"],
            )
            if project.memberships.filter(user__username__iexact=username).exists():
                # Members are listed to every member anyway: this reveals nothing new.
                raise serializers.ValidationError(
                    {"username": [f"{username!r} is already a member; change their role instead."]}
                )
            invitation = invite(project, username, Role(role), signed_in_user(request))
            return Response(InvitationSerializer(invitation).data, status=status.HTTP_201_CREATED)
        pending = project.invitations.open().select_related("project", "invited_by")
        return Response(InvitationSerializer(pending, many=True).data)

    @extend_schema(
        parameters=[OpenApiParameter("invitation_id", int, OpenApiParameter.PATH)],
        request=None,
        responses={204: None},
    )
    @action(detail=True, methods=["delete"], url_path=r"invitations/(?P<invitation_id>[0-9]+)")
    def uninvite(
        self, request: Request, slug: str | None = None, invitation_id: str = ""
    ) -> Response:
        """Revoke an open invitation (owners only)."""
        project = self.get_object()
        revoked = Invitation.objects.filter(
            pk=invitation_id, project=project, status=InvitationStatus.PENDING
        ).update(status=InvitationStatus.REVOKED, responded_at=timezone.now())
        if revoked != 1:
            raise exceptions.NotFound("No such open invitation in this project.")
        invitation = Invitation.objects.get(pk=invitation_id)
        self.audit("invitation.revoke", invitation, project, username=invitation.username)
        return Response(status=status.HTTP_204_NO_CONTENT)


SCOPES_HELP = (
    "read: every GET its user may make (always included); write: any POST, PUT, PATCH or "
    "DELETE; members: owner actions (members, invitations, the project itself; needs write)."
)


class ApiTokenSerializer(serializers.ModelSerializer):
    scopes = serializers.ListField(
        child=serializers.ChoiceField(choices=TokenScope.choices),
        read_only=True,
        help_text=SCOPES_HELP,
    )

    class Meta:
        model = ApiToken
        fields = [
            "id",
            "name",
            "prefix",
            "scopes",
            "created_at",
            "expires_at",
            "revoked_at",
            "last_used_at",
        ]
        read_only_fields = fields


class ApiTokenCreateSerializer(serializers.ModelSerializer):
    scopes = serializers.ListField(
        child=serializers.ChoiceField(choices=TokenScope.choices),
        default=default_token_scopes,
        help_text=f"{SCOPES_HELP} Default: read and write.",
    )

    class Meta:
        model = ApiToken
        fields = ["name", "scopes", "expires_at"]

    def validate_scopes(self, value: list[str]) -> list[TokenScope]:
        scopes = {TokenScope.READ, *(TokenScope(v) for v in value)}
        if TokenScope.MEMBERS in scopes and TokenScope.WRITE not in scopes:
            raise serializers.ValidationError(
                "The 'members' scope needs 'write' too (managing members is a write); "
                f"got {sorted(value)}."
            )
        return [s for s in ALL_SCOPES if s in scopes]

    def validate_expires_at(self, value: Any) -> Any:
        if value is not None and value <= timezone.now():
            raise serializers.ValidationError(
                f"The expiry {value.isoformat()} is in the past; give a future time or none."
            )
        return value


class ApiTokenCreatedSerializer(ApiTokenSerializer):
    """The creation response: the only time the secret is returned."""

    token = serializers.CharField(read_only=True, help_text="Shown once, at creation.")

    class Meta(ApiTokenSerializer.Meta):
        fields = [*ApiTokenSerializer.Meta.fields, "token"]
        read_only_fields = [*ApiTokenSerializer.Meta.read_only_fields, "token"]


class ApiTokenViewSet(
    mixins.ListModelMixin,
    mixins.CreateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """Your personal API tokens. The secret is returned once, when created;
    deleting a token revokes it."""

    serializer_class = ApiTokenSerializer
    permission_classes = [IsAuthenticated]
    queryset = ApiToken.objects.none()  # for the schema; real rows come from get_queryset

    def get_queryset(self) -> QuerySet[ApiToken]:
        if not self.request.user.is_authenticated:
            return ApiToken.objects.none()
        return ApiToken.objects.filter(user=signed_in_user(self.request))

    @extend_schema(request=ApiTokenCreateSerializer, responses={201: ApiTokenCreatedSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """A new personal token, its secret returned once. Only a signed-in session (a
        password) creates tokens, never a token: one that could would outlive its own
        revocation in the hands of whoever stole it."""
        if isinstance(request.auth, ApiToken):
            raise exceptions.PermissionDenied(
                "An API token cannot create API tokens; sign in with your password "
                "(the API tokens page) to create one."
            )
        serializer = ApiTokenCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        token, raw = ApiToken.issue(
            signed_in_user(request),
            data["name"],
            data.get("expires_at"),
            data["scopes"],
        )
        body = dict(ApiTokenSerializer(token).data)
        body["token"] = raw
        return Response(body, status=status.HTTP_201_CREATED)

    def perform_destroy(self, instance: ApiToken) -> None:
        ApiToken.objects.filter(pk=instance.pk).update(revoked_at=timezone.now())


class AuditEventSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor.username", default=None, read_only=True)
    project = serializers.CharField(source="project.slug", default=None, read_only=True)

    class Meta:
        model = AuditEvent
        fields = ["id", "at", "project", "actor", "action", "object_type", "object_id", "detail"]


class AuditEventViewSet(mixins.ListModelMixin, ProjectScopedViewSet):
    """Who created, changed, cancelled or labelled what (newest first)."""

    queryset = AuditEvent.objects.select_related("actor", "project").order_by("-at")
    serializer_class = AuditEventSerializer
    filterset_fields = ["action"]

"""Membership invitations: an owner invites a username, its holder accepts or declines.

The answer to an invitation is the same whether or not the username exists (the
invitation stores the name as typed), and nobody joins a project without accepting.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.validators import UnicodeUsernameValidator
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from studio.api.common.authentication import require_token_scope
from studio.api.common.permissions import signed_in_user
from studio.projects.models import (
    AuditEvent,
    Invitation,
    InvitationStatus,
    Membership,
    Project,
    Role,
    TokenScope,
    invitation_expiry,
)


class InvitationSerializer(serializers.ModelSerializer):
    project = serializers.CharField(source="project.slug", read_only=True)
    project_name = serializers.CharField(source="project.name", read_only=True)
    invited_by = serializers.CharField(source="invited_by.username", default=None, read_only=True)

    class Meta:
        model = Invitation
        fields = [
            "id",
            "project",
            "project_name",
            "username",
            "role",
            "invited_by",
            "created_at",
            "expires_at",
            "status",
        ]
        read_only_fields = fields


class InviteSerializer(serializers.Serializer):
    """Who to invite: any well-formed username is accepted, existing or not."""

    username = serializers.CharField(max_length=150, validators=[UnicodeUsernameValidator()])
    role = serializers.ChoiceField(choices=Role.choices, default=Role.MEMBER)


def invite(project: Project, username: str, role: Role, actor: Any) -> Invitation:
    """Invite `username` to `project`; inviting the same name again (any case) refreshes
    the pending invitation's role and expiry instead of adding a second one."""
    with transaction.atomic():
        pending = (
            Invitation.objects.select_for_update()
            .filter(project=project, username__iexact=username, status=InvitationStatus.PENDING)
            .first()
        )
        if pending is None:
            invitation = Invitation.objects.create(
                project=project, username=username, role=role, invited_by=actor
            )
        else:
            pending.role, pending.invited_by = role, actor
            pending.username, pending.expires_at = username, invitation_expiry()
            pending.save(update_fields=["role", "invited_by", "username", "expires_at"])
            invitation = pending
        AuditEvent.record(
            "invitation.create", invitation, project, actor, username=username, role=role
        )
    return invitation


class InvitationViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """Your open invitations (to your username, not expired): accept or decline each.
    Another user's invitation is 404 here."""

    serializer_class = InvitationSerializer
    permission_classes = [IsAuthenticated]
    pagination_class = None  # a handful at most
    queryset = Invitation.objects.none()  # for the schema; real rows come from get_queryset

    def get_queryset(self) -> QuerySet[Invitation]:
        if not self.request.user.is_authenticated:
            return Invitation.objects.none()
        mine = Invitation.objects.addressed_to(signed_in_user(self.request))
        return mine.select_related("project", "invited_by").order_by("-created_at")

    def claim(self, outcome: InvitationStatus) -> Invitation:
        """Close one of my open invitations, once: of two concurrent answers only one
        changes the row; the other gets 404 like any invitation that isn't open."""
        require_token_scope(self.request.auth, TokenScope.MEMBERS)
        invitation: Invitation = self.get_object()
        closed = Invitation.objects.filter(
            pk=invitation.pk, status=InvitationStatus.PENDING
        ).update(status=outcome, responded_at=timezone.now())
        if closed != 1:
            raise exceptions.NotFound("No such invitation.")
        return invitation

    @extend_schema(request=None, responses={200: InvitationSerializer})
    @action(detail=True, methods=["post"])
    @transaction.atomic
    def accept(self, request: Request, pk: str | None = None) -> Response:
        """Join the project with the invited role (an existing membership keeps its role).
        Answers the closed invitation, which names the project."""
        invitation = self.claim(InvitationStatus.ACCEPTED)
        user = signed_in_user(request)
        membership, _ = Membership.objects.get_or_create(
            project=invitation.project, user=user, defaults={"role": invitation.role}
        )
        AuditEvent.record("member.join", membership, invitation.project, user, role=membership.role)
        invitation.refresh_from_db()
        return Response(InvitationSerializer(invitation).data)

    @extend_schema(request=None, responses={204: None})
    @action(detail=True, methods=["post"])
    @transaction.atomic
    def decline(self, request: Request, pk: str | None = None) -> Response:
        invitation = self.claim(InvitationStatus.DECLINED)
        AuditEvent.record(
            "invitation.decline", invitation, invitation.project, signed_in_user(request)
        )
        return Response(status=status.HTTP_204_NO_CONTENT)

"""Project roles: viewers read, members write, owners also manage the project."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from rest_framework import exceptions, permissions
from rest_framework.request import Request
from rest_framework.views import APIView

from studio.api.common.authentication import require_token_scope
from studio.projects.models import Membership, Project, Role, TokenScope

ROLE_RANK = {Role.VIEWER: 0, Role.MEMBER: 1, Role.OWNER: 2}


def role_in(project: Project | int, user: Any) -> Role | None:
    if not user or not user.is_authenticated:
        return None
    project_id = project if isinstance(project, int) else project.pk
    role = (
        Membership.objects.filter(project_id=project_id, user=user)
        .values_list("role", flat=True)
        .first()
    )
    return Role(role) if role else None


def has_role(project: Project | int, user: Any, needed: Role) -> bool:
    role = role_in(project, user)
    return role is not None and ROLE_RANK[role] >= ROLE_RANK[needed]


class ProjectRolePermission(permissions.BasePermission):
    """Reads need any role, writes need `write_role` (member unless a view says owner).

    Lists are protected by scoping in get_queryset, not here: object permissions
    never run for lists.
    """

    def has_permission(self, request: Request, view: APIView) -> bool:
        return bool(request.user and request.user.is_authenticated)

    def has_object_permission(self, request: Request, view: APIView, obj: Any) -> bool:
        project = project_of(obj)
        needed = (
            Role.VIEWER
            if request.method in permissions.SAFE_METHODS
            else getattr(view, "write_role", Role.MEMBER)
        )
        allowed = has_role(project, request.user, needed)
        if allowed and needed == Role.OWNER:
            require_token_scope(request.auth, TokenScope.MEMBERS)
        return allowed


def project_of(obj: Any) -> Project:
    """Follow an object to its project (every domain object has one)."""
    if isinstance(obj, Project):
        return obj
    for path in ("project", "dataset", "function", "run", "sample"):
        parent = getattr(obj, path, None)
        if parent is not None:
            return project_of(parent)
    raise TypeError(f"{type(obj).__name__} has no project")


def signed_in_user(request: Request) -> User:
    """The request's user, typed; raises 401 for anonymous requests."""
    user = request.user
    if not isinstance(user, User):
        raise exceptions.NotAuthenticated()
    return user

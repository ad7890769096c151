"""Every queryset is scoped to the projects the user belongs to."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import MultipleObjectsReturned, ValidationError
from django.db.models import Model, QuerySet
from django.http import Http404
from rest_framework import exceptions, permissions, viewsets

from studio.api.common.authentication import require_token_scope
from studio.api.common.permissions import ProjectRolePermission, has_role
from studio.core.planner import joins_as_written
from studio.projects.models import AuditEvent, Membership, Project, Role, TokenScope


def project_ids_of(user: User) -> QuerySet[Membership, Any]:
    """The ids of the projects `user` belongs to, as a subquery to filter by
    (`<path to project>__in`). A semi-join never repeats a row, so no DISTINCT is needed:
    a DISTINCT over a run's wide row with its joins took Postgres 8-16 ms to plan per
    detail request (1.3 ms without). Other views join `memberships__user` directly, which
    one membership per (project, user) also keeps free of repeats."""
    return Membership.objects.filter(user=user).values("project_id")


class ProjectScopedViewSet(viewsets.GenericViewSet):
    """Base of every project-owned resource.

    `project_path` is the ORM path from the model to its Project ("project",
    "dataset__project", ...). Lists and details only ever see objects of the
    requesting user's projects; creating needs `write_role` in the target project.
    """

    permission_classes = [ProjectRolePermission]
    project_path = "project"
    write_role = Role.MEMBER
    # A list whose rows join many to-one lookups (a run with its inputs) plans them in
    # the order written: studio.core.planner.
    list_joins_as_written = False
    # What a 404 calls the object; the model's name by default. A view over a subset of a
    # model (evaluations are runs) names its own.
    object_noun: str | None = None

    def get_queryset(self) -> QuerySet[Any]:
        queryset = super().get_queryset()
        user = self.request.user
        if not isinstance(user, User):  # anonymous
            return queryset.none()
        return queryset.filter(**{f"{self.project_path}__in": project_ids_of(user)})

    def paginate_queryset(self, queryset: QuerySet[Any] | Sequence[Any]) -> list[Any] | None:
        if not (self.list_joins_as_written and isinstance(queryset, QuerySet)):
            return super().paginate_queryset(queryset)
        with joins_as_written(queryset.db):  # the page's count and its rows
            return super().paginate_queryset(queryset)

    def get_object(self) -> Any:
        """DRF's `get_object` without `QuerySet.get`'s LIMIT: the lookup names one row,
        and a LIMIT makes Postgres plan each join for a fast start as well. A run's detail
        query (ten tables) took 4.6-5.9 ms to plan with it and 1.2-1.3 ms without."""
        queryset = self.filter_queryset(self.get_queryset()).order_by()
        lookup = self.lookup_url_kwarg or self.lookup_field
        try:
            found = list(queryset.filter(**{self.lookup_field: self.kwargs[lookup]}))
        except (TypeError, ValueError, ValidationError):  # an id of the wrong type: DRF's 404
            raise Http404 from None
        if not found:
            # The same sentence whether the object does not exist or belongs to a project
            # the user is not in: ids of other projects' objects do not leak.
            name = self.object_noun or queryset.model._meta.verbose_name
            raise Http404(f"There is no {name} #{self.kwargs[lookup]} in your projects.")
        if len(found) > 1:
            raise MultipleObjectsReturned(f"{self.lookup_field} is not unique")
        self.check_object_permissions(self.request, found[0])
        return found[0]

    def project_for(self, slug: str, role: Role | None = None) -> Project:
        """The project named by a request, if the user has `role` there (write_role by
        default); 404 for an unknown slug and for outsiders alike."""
        project = Project.objects.filter(slug=slug).first()
        if project is None:
            raise exceptions.NotFound("No such project.")
        self.require_role(project, role)
        return project

    def require_role(self, project: Project, role: Role | None = None) -> None:
        needed = role or self.write_role
        if not has_role(project, self.request.user, needed):
            # 404 for outsiders so project ids don't leak; 403 for members lacking a role.
            if not has_role(project, self.request.user, Role.VIEWER):
                raise exceptions.NotFound("No such project.")
            raise exceptions.PermissionDenied(
                f"This needs the {needed.value} role in project {project.slug!r}."
            )
        if needed == Role.OWNER and self.request.method not in permissions.SAFE_METHODS:
            require_token_scope(self.request.auth, TokenScope.MEMBERS)

    def audit(self, action: str, obj: Model, project: Project, **detail: Any) -> None:
        AuditEvent.record(action, obj, project, self.request.user, **detail)

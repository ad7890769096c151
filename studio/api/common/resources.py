"""The shared viewset of project-owned, versioned resources (datasets, reward
functions): list, read, rename or describe, and delete (owner role; 409 while runs
use a version). A new versioned resource declares its queryset, serializers, noun
and audit prefix, and its own `create`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import transaction
from django.db.models import ProtectedError
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, status
from rest_framework.request import Request
from rest_framework.response import Response

from studio.api.common.errors import Conflict
from studio.api.common.scoping import ProjectScopedViewSet
from studio.projects.models import ProjectResource, Role

VERSION_NUMBER = OpenApiParameter(
    "number", int, OpenApiParameter.PATH, description="The version number (1, 2, ...)."
)


class ProjectResourceViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.DestroyModelMixin,
    ProjectScopedViewSet,
):
    noun = "resource"  # in messages: "Dataset 'x' can't be deleted"
    audit_prefix = "resource"  # audit actions "<prefix>.update", "<prefix>.delete"
    update_serializer_class: type[Any]
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]

    def get_permissions(self) -> Any:
        if self.action == "destroy":
            self.write_role = Role.OWNER
        return super().get_permissions()

    def detail_response(self, pk: int, code: int = status.HTTP_200_OK) -> Response:
        """The object as the list shows it (annotations and versions included)."""
        return Response(self.get_serializer(self.get_queryset().get(pk=pk)).data, status=code)

    def partial_update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        resource: ProjectResource = self.get_object()
        data = self.update_serializer_class(instance=resource, data=request.data)
        data.is_valid(raise_exception=True)
        changes = dict(data.validated_data)
        with transaction.atomic():
            resource.change(changes)
            self.audit(
                f"{self.audit_prefix}.update", resource, resource.project, fields=sorted(changes)
            )
        return self.detail_response(resource.pk)

    def after_delete(self, resource: Any) -> Callable[[], None] | None:
        """Work to do once the deletion is committed (read before it: removing files)."""
        return None

    @extend_schema(responses={204: None, 409: OpenApiResponse(description="Runs use it.")})
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        resource = self.get_object()
        then = self.after_delete(resource)
        try:
            with transaction.atomic():
                self.audit(
                    f"{self.audit_prefix}.delete", resource, resource.project, name=resource.name
                )
                resource.delete()
                if then is not None:
                    transaction.on_commit(then)
        except ProtectedError as exc:
            runs = sorted({str(obj) for obj in exc.protected_objects})[:5]
            raise Conflict(
                f"{self.noun.capitalize()} {resource.name!r} can't be deleted: runs use its "
                f"versions ({', '.join(runs)}). Delete those runs first."
            ) from None
        return Response(status=status.HTTP_204_NO_CONTENT)

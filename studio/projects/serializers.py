"""Serializer shapes shared by every project-owned, versioned resource."""

from __future__ import annotations

from typing import Any

from rest_framework import exceptions, serializers

from studio.projects.models import Project

RESOURCE_FIELDS = [
    "id",
    "project",
    "name",
    "description",
    "created_by",
    "created_at",
    "version_count",
    "latest_version",
]


# A resource as lists and details show it; subclasses give the Meta (model, fields from
# RESOURCE_FIELDS) and `get_latest_version`, typed for the schema. (Comments, not
# docstrings: drf-spectacular copies a docstring into every subclass's component.)
class ProjectResourceSerializer(serializers.ModelSerializer):
    project = serializers.CharField(source="project.slug", read_only=True)
    created_by = serializers.CharField(source="created_by.username", read_only=True)
    version_count = serializers.IntegerField(read_only=True)
    latest_version = serializers.SerializerMethodField()

    def latest_version_of(self, resource: Any) -> Any:
        if hasattr(resource, "ordered_versions"):  # prefetched, newest first
            return resource.ordered_versions[0] if resource.ordered_versions else None
        return resource.versions.order_by("-number").first()


class ProjectResourceCreateSerializer(serializers.Serializer):
    noun = "resource"  # in the error message: "A dataset named ... already exists"
    model: Any  # the ProjectResource subclass created

    project = serializers.SlugField(max_length=100, help_text="The project's slug.")
    name = serializers.CharField(max_length=100)
    description = serializers.CharField(required=False, allow_blank=True, default="")

    def validate_project(self, slug: str) -> Project:
        """The project, checked by the view's `require_role`: unknown and foreign slugs
        alike are 404 (raised before the other checks, so nothing about it leaks)."""
        project = Project.objects.filter(slug=slug).first()
        if project is None:
            raise exceptions.NotFound("No such project.")
        self.context["view"].require_role(project)
        return project

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        project, name = attrs["project"], attrs["name"]
        if self.model.objects.filter(project=project, name=name).exists():
            raise serializers.ValidationError(
                {"name": [f"A {self.noun} named {name!r} already exists in {project.slug!r}."]}
            )
        return attrs


# Renames or describes a resource (`instance`), its name unique in its project. (A
# comment, not a docstring: drf-spectacular would copy a docstring into each subclass's
# schema component.)
class ProjectResourceUpdateSerializer(serializers.Serializer):
    noun = "resource"  # in the error message: "A dataset named ... already exists"

    name = serializers.CharField(max_length=100, required=False)
    description = serializers.CharField(required=False, allow_blank=True)

    def validate_name(self, value: str) -> str:
        instance: Any = self.instance
        taken = type(instance).objects.filter(project=instance.project, name=value)
        if taken.exclude(pk=instance.pk).exists():  # the constraint would answer with a 500
            raise serializers.ValidationError(
                f"A {self.noun} named {value!r} already exists in this project."
            )
        return value

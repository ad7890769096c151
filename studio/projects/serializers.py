"""Serializer shapes shared by every project-owned, versioned resource."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers


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

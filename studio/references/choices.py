"""Checks shared by the input kinds: an id is looked up in the run's project only, and a
model must have the role its place needs and a folder the studio can read."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from studio.model_registry.locations import DEMO_ASSETS, ModelUnavailable, model_folder
from studio.model_registry.models import ModelKind, ModelRole, RegisteredModel
from studio.model_registry.services import add_model_record
from studio.projects.models import Project
from studio.references.registry import InputError

VAR_PREFIX = "var/"


def one(queryset: QuerySet[Any], pk: int, field_name: str, what: str, project: Project) -> Any:
    """The object if it belongs to `project`; the same error whether `pk` exists in
    another project or nowhere, so other projects' ids don't leak."""
    found = queryset.filter(pk=pk).first()
    if found is None:
        raise InputError({field_name: [f"No {what} {pk} in project {project.slug!r}."]})
    return found


def project_models(project: Project) -> QuerySet[RegisteredModel]:
    return RegisteredModel.objects.filter(project=project).select_related("checkpoint")


def demo_model(project: Project, asset: str, user: Any) -> RegisteredModel:
    """The project's record of a built-in demo model, added on first use."""
    existing = project_models(project).filter(kind=ModelKind.DEMO, relative_path=asset).first()
    if existing is not None:
        return existing
    return add_model_record(project, user, ModelKind.DEMO, name=asset, relative_path=asset)


def default_model(
    project: Project, default_path: Any, field_name: str, user: Any
) -> RegisteredModel:
    """A model field left out: the preset's demo model (`var/demo-model`, ...), if it is one."""
    asset = default_path[len(VAR_PREFIX) :] if isinstance(default_path, str) else ""
    if default_path and default_path.startswith(VAR_PREFIX) and asset in DEMO_ASSETS:
        try:
            return demo_model(project, asset, user)
        except ModelUnavailable as exc:
            raise InputError({field_name: [str(exc)]}) from None
    raise InputError({field_name: ["Choose a model of the project (/api/models/)."]})


def usable(model: RegisteredModel, field_name: str, role: str) -> RegisteredModel:
    if model.role != role:
        wanted = (
            "a causal LM" if role == ModelRole.POLICY else "a reward model (sequence classifier)"
        )
        raise InputError(
            {
                field_name: [
                    f"Model {model.name!r} is a {model.get_role_display()}; choose {wanted}."
                ]
            }
        )
    try:
        model_folder(model)
    except ModelUnavailable as exc:
        raise InputError({field_name: [str(exc)]}) from None
    return model

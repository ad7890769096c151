"""A project's models (studio.model_registry): listed, inspected and added by choosing
one of the folders the server offers, or a run's checkpoint; never by path."""

from __future__ import annotations

from typing import Any

import django_filters.rest_framework as filters
from django.db import transaction
from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions, mixins, serializers, status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from studio.api.common.permissions import signed_in_user
from studio.api.common.scoping import ProjectScopedViewSet
from studio.model_registry import hub
from studio.model_registry.locations import ModelUnavailable, choice_by_source, offered_folders
from studio.model_registry.models import ModelKind, ModelRole, ModelStatus, RegisteredModel
from studio.model_registry.services import add_model_record
from studio.projects.models import Project, Role
from studio.runs.models import Checkpoint


class ModelSerializer(serializers.ModelSerializer[RegisteredModel]):
    project = serializers.CharField(source="project.slug", read_only=True)
    created_by = serializers.CharField(source="created_by.username", read_only=True)
    run = serializers.IntegerField(
        source="checkpoint.run_id",
        read_only=True,
        allow_null=True,
        default=None,
        help_text="For a checkpoint: the run it comes from.",
    )
    step = serializers.IntegerField(
        source="checkpoint.step",
        read_only=True,
        allow_null=True,
        default=None,
        help_text="For a checkpoint: the step it was saved at.",
    )
    progress = serializers.DictField(
        child=serializers.IntegerField(),
        read_only=True,
        help_text="A hub download's files_done, files_total, bytes_done, bytes_total.",
    )
    info = serializers.DictField(
        read_only=True,
        help_text="architecture, model_type, parameters, tokenizer, chat_template, "
        'reward_model, vocabulary (a fingerprint of tokenizer.json\'s token ids, "" without '
        "one) and adapter (a peft adapter's r, lora_alpha, target_modules; null for a model): "
        "read from the folder when it was added.",
    )

    class Meta:
        model = RegisteredModel
        fields = [
            "id",
            "project",
            "name",
            "kind",
            "role",
            "status",
            "progress",
            "error",
            "hub_id",
            "revision",
            "run",
            "step",
            "info",
            "created_by",
            "created_at",
        ]
        read_only_fields = fields


class ModelCreateSerializer(serializers.Serializer[dict[str, Any]]):
    project = serializers.SlugField(max_length=100, help_text="The project's slug.")
    name = serializers.CharField(
        max_length=200, required=False, help_text="Default: the folder's name."
    )
    folder = serializers.CharField(
        max_length=64,
        required=False,
        help_text="The id of a folder the server offers (GET /api/models/available/).",
    )
    checkpoint_run = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=2**63 - 1,
        help_text="Instead of `folder`: a run of the project whose final export to add.",
    )

    hub_id = serializers.CharField(
        max_length=200,
        required=False,
        help_text="Instead: a Hugging Face repository id (e.g. `Qwen/Qwen2.5-0.5B-Instruct`), "
        "downloaded by a worker into the studio's model cache (its safetensors weights).",
    )
    revision = serializers.CharField(
        max_length=100, required=False, help_text="With hub_id: a branch, tag or commit."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        given = [k for k in ("folder", "checkpoint_run", "hub_id") if k in attrs]
        if len(given) != 1:
            raise serializers.ValidationError(
                {"folder": ["Give exactly one of folder, checkpoint_run or hub_id."]}
            )
        if "hub_id" in attrs and not hub.valid_hub_id(attrs["hub_id"]):
            raise serializers.ValidationError(
                {"hub_id": ["Not a hub repository id: `name` or `owner/name`."]}
            )
        if not hub.valid_revision(attrs.get("revision", "main")):
            raise serializers.ValidationError({"revision": ["Not a branch, tag or commit."]})
        return attrs


class OfferedFolderSerializer(serializers.Serializer[dict[str, Any]]):
    folder = serializers.CharField(help_text="Its id, for POST /api/models/.")
    kind = serializers.CharField(help_text="demo or server.")
    name = serializers.CharField(help_text="The folder's name (relative to its root).")
    role = serializers.CharField(
        help_text="policy, reward (a sequence classifier) or adapter (a peft LoRA adapter)."
    )


class ModelFilter(filters.FilterSet):
    project = filters.CharFilter(field_name="project__slug", help_text="A project's slug.")
    role = filters.ChoiceFilter(choices=RegisteredModel._meta.get_field("role").choices)

    class Meta:
        model = RegisteredModel
        fields = ["project", "role"]


class ModelViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ProjectScopedViewSet):
    """Models of your projects: what runs train and score with. Members add them."""

    queryset = RegisteredModel.objects.select_related("project", "created_by", "checkpoint")
    serializer_class = ModelSerializer
    filterset_class = ModelFilter

    def get_queryset(self) -> QuerySet[RegisteredModel]:
        return super().get_queryset().order_by("name", "id")

    @extend_schema(
        request=ModelCreateSerializer, responses={201: ModelSerializer, 202: ModelSerializer}
    )
    def create(self, request: Request) -> Response:
        """Add a model: a folder the server offers (`folder`), the final Hugging Face
        export of one of the project's runs (`checkpoint_run`), or a hub repository
        (`hub_id`: 202, downloaded by a worker; follow its `status` and `progress`)."""
        data = ModelCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        project = self.project_for(v["project"])
        user = signed_in_user(request)
        if "hub_id" in v:
            return self._add_from_hub(project, user, v)
        try:
            if "folder" in v:
                choice = choice_by_source(v["folder"])
                if choice is None:
                    raise exceptions.ValidationError(
                        {"folder": ["No such folder on offer (GET /api/models/available/)."]}
                    )
                record = add_model_record(
                    project,
                    user,
                    choice.kind,
                    name=v.get("name") or choice.name,
                    root=str(choice.root) if choice.kind == ModelKind.SERVER else "",
                    relative_path=choice.name,
                )
            else:
                checkpoint = (
                    Checkpoint.objects.filter(run_id=v["checkpoint_run"], run__project=project)
                    .order_by("-step", "-attempt")
                    .first()
                )
                if checkpoint is None:
                    raise exceptions.ValidationError(
                        {
                            "checkpoint_run": [
                                f"No checkpoint of run {v['checkpoint_run']} in this project."
                            ]
                        }
                    )
                record = add_model_record(
                    project,
                    user,
                    ModelKind.CHECKPOINT,
                    name=v.get("name") or f"run-{checkpoint.run_id}-step-{checkpoint.step}",
                    checkpoint=checkpoint,
                )
        except ModelUnavailable as exc:
            raise exceptions.ValidationError({"folder": [str(exc)]}) from None
        with transaction.atomic():
            self.audit("model.add", record, project, name=record.name, kind=record.kind)
        return Response(ModelSerializer(record).data, status=status.HTTP_201_CREATED)

    def _add_from_hub(self, project: Project, user: Any, v: dict[str, Any]) -> Response:
        revision = v.get("revision", "main")
        name = v.get("name") or v["hub_id"]
        existing = RegisteredModel.objects.filter(project=project, name=name).first()
        if existing is not None:
            retry = (existing.kind, existing.status, existing.hub_id, existing.revision) == (
                ModelKind.HUB,
                ModelStatus.FAILED,
                v["hub_id"],
                revision,
            )
            if not retry:
                raise exceptions.ValidationError(
                    {"name": [f"The project already has a model named {name!r}."]}
                )
            # The same download asked for again after it failed: try it again.
            with transaction.atomic():
                RegisteredModel.objects.filter(pk=existing.pk, status=ModelStatus.FAILED).update(
                    status=ModelStatus.QUEUED, error="", progress={}
                )
                self.audit("model.retry", existing, project, name=name, kind=existing.kind)
                hub.enqueue(existing.pk)
            existing.refresh_from_db()
            return Response(ModelSerializer(existing).data, status=status.HTTP_202_ACCEPTED)
        with transaction.atomic():
            record = RegisteredModel.objects.create(
                project=project,
                name=name,
                kind=ModelKind.HUB,
                role=ModelRole.POLICY,  # until the download shows what it is
                hub_id=v["hub_id"],
                revision=revision,
                relative_path=hub.cache_name(v["hub_id"], revision),
                status=ModelStatus.QUEUED,
                created_by=user,
            )
            self.audit("model.add", record, project, name=record.name, kind=record.kind)
            hub.enqueue(record.pk)
        return Response(ModelSerializer(record).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(
        parameters=[
            OpenApiParameter("project", str, required=True, description="A project's slug.")
        ],
        responses=OfferedFolderSerializer(many=True),
    )
    @action(detail=False, methods=["get"], filter_backends=[], pagination_class=None)
    def available(self, request: Request) -> Response:
        """The model folders this server offers: built demo models and the folders under
        its model roots (RLSTUDIO_MODEL_ROOTS). Needs a role in the project."""
        self.project_for(request.query_params.get("project", ""), Role.VIEWER)  # a role there
        return Response(
            [
                {"folder": c.source, "kind": c.kind, "name": c.name, "role": c.role}
                for c in offered_folders()
            ]
        )

"""Every dataset version of one project in one list: what the run and evaluation forms'
data pickers show, asked for once instead of once per dataset."""

from __future__ import annotations

import django_filters.rest_framework as filters
from rest_framework import mixins

from studio.api.common.scoping import ProjectScopedViewSet
from studio.datasets.models import DatasetVersion
from studio.datasets.serializers import DatasetVersionSerializer


class ProjectVersionFilter(filters.FilterSet):
    project = filters.CharFilter(field_name="dataset__project__slug", help_text="A project's slug.")

    class Meta:
        model = DatasetVersion
        fields = ["project"]


class ProjectDatasetVersionViewSet(mixins.ListModelMixin, ProjectScopedViewSet):
    """Every version of every dataset of a project (`?project=<slug>`; without it, of all
    your projects), by dataset name, newest version first. Not paged, like one dataset's
    versions: the pickers show them all. A project you are not in lists nothing."""

    queryset = DatasetVersion.objects.select_related("dataset__project", "created_by").order_by(
        "dataset__name", "dataset_id", "-number"
    )
    serializer_class = DatasetVersionSerializer
    project_path = "dataset__project"
    filterset_class = ProjectVersionFilter
    pagination_class = None

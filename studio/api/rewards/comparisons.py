"""A/B of two reward versions: score a finished test-run's rows again with another
version (a queued test-run of pasted completions), then compare the two row by row.
Viewers compare; members start the second test-run. See studio.rewards.comparison."""

from __future__ import annotations

from dataclasses import replace

from django.db import transaction
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, status
from rest_framework.request import Request
from rest_framework.response import Response

from studio.api.common.permissions import signed_in_user
from studio.api.common.scoping import ProjectScopedViewSet
from studio.rewards import lifecycle
from studio.rewards.comparison import NotComparable, compare, completions_of
from studio.rewards.comparison_serializers import (
    ComparisonQuerySerializer,
    ComparisonSerializer,
    ComparisonStartSerializer,
)
from studio.rewards.models import RewardTestRun, RewardVersion
from studio.rewards.testrun_serializers import RewardTestRunSerializer

Source = RewardTestRun.Source


class RewardComparisonViewSet(ProjectScopedViewSet):
    queryset = RewardTestRun.objects.select_related("version__function__project", "created_by")
    project_path = "version__function__project"
    serializer_class = ComparisonSerializer

    def _test_run(self, pk: int, field: str) -> RewardTestRun:
        test_run = self.get_queryset().filter(pk=pk).first()
        if test_run is None:
            raise exceptions.NotFound(f"No test-run {pk} in your projects ({field}).")
        return test_run

    @extend_schema(parameters=[ComparisonQuerySerializer], responses=ComparisonSerializer)
    def compare(self, request: Request) -> Response:
        """Row i of test-run `a` against row i of test-run `b`: both scores, the
        difference, and the rows where they disagree first."""
        query = ComparisonQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        a = self._test_run(query.validated_data["a"], "a")
        b = self._test_run(query.validated_data["b"], "b")
        try:
            return Response(compare(a, b))
        except NotComparable as exc:
            raise exceptions.ValidationError({"b": [str(exc)]}) from None

    @extend_schema(request=ComparisonStartSerializer, responses={202: RewardTestRunSerializer})
    def start(self, request: Request) -> Response:
        """Score the rows of a succeeded test-run again with another reward version of
        the same project: a queued test-run of those rows as pasted completions (202).
        Poll it, then GET this endpoint with a=base_test_run&b=<its id>."""
        data = ComparisonStartSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        base = self._test_run(v["base_test_run"], "base_test_run")
        project = base.project
        self.require_role(project)
        version = RewardVersion.objects.filter(
            pk=v["reward_version"], function__project=project
        ).first()
        if version is None:
            raise exceptions.ValidationError(
                {"reward_version": [f"No reward version {v['reward_version']} in this project."]}
            )
        try:
            completions = completions_of(base)
        except NotComparable as exc:
            raise exceptions.ValidationError({"base_test_run": [str(exc)]}) from None
        params = replace(lifecycle.Params.from_json(base.params), rows=len(completions), offset=0)
        user = signed_in_user(request)
        with transaction.atomic():
            test_run = lifecycle.create(
                version, Source.COMPLETIONS, params, user, completions=completions
            )
            self.audit(
                "reward.test",
                test_run,
                project,
                number=version.number,
                source=Source.COMPLETIONS,
                compared_with=base.pk,
            )
            lifecycle.enqueue(test_run.pk)
        created = self.get_queryset().defer("completions").get(pk=test_run.pk)
        return Response(RewardTestRunSerializer(created).data, status=status.HTTP_202_ACCEPTED)

"""Rollout review reads of one run: steps, distinct prompts, a prompt's timeline, the
groups of a step, the score histogram and length-vs-score points.

Routed explicitly under /api/runs/{id}/rollouts/ (see urls.py). The sample list,
a group's samples, a sample's detail and labels live in samples.py.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django.db.models import BooleanField, ExpressionWrapper, Prefetch, Q, QuerySet
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers
from rest_framework.request import Request
from rest_framework.response import Response

from studio.api.common.permissions import signed_in_user
from studio.api.common.scoping import ProjectScopedViewSet
from studio.api.runs.metrics import StepRangeSerializer
from studio.runs.models import Run
from studio.telemetry.models import RolloutSample, SampleLabel
from studio.telemetry.samples.queries import (
    distinct_prompts,
    length_score_points,
    same_prompt_samples,
    score_histogram,
    step_counts,
    step_groups,
)
from studio.telemetry.samples.serializers import RolloutSampleSerializer
from studio.telemetry.series import STEP_MAX

MAX_PROMPTS, MAX_TIMELINE, MAX_GROUPS, MAX_BINS, MAX_POINTS = 500, 1000, 2000, 200, 5000
NOT_FOUND = OpenApiResponse(description="No such run in your projects.")
BAD_QUERY = OpenApiResponse(description="A parameter is invalid.")


# --- query parameters --------------------------------------------------------------------


class StepsQuerySerializer(serializers.Serializer):
    split = serializers.CharField(max_length=8, required=False, help_text="train or val.")


class PromptsQuerySerializer(serializers.Serializer):
    q = serializers.CharField(
        max_length=200, required=False, help_text="Only prompts containing this text."
    )
    limit = serializers.IntegerField(min_value=1, max_value=MAX_PROMPTS, default=100)


class TimelineQuerySerializer(serializers.Serializer):
    sample = serializers.IntegerField(
        min_value=1,
        help_text="A sample (of any run you can read) whose prompt to follow in this run.",
    )
    limit = serializers.IntegerField(min_value=1, max_value=MAX_TIMELINE, default=500)


class GroupsQuerySerializer(serializers.Serializer):
    step = serializers.IntegerField(min_value=0, max_value=STEP_MAX)
    signal = serializers.ChoiceField(
        choices=["any", "learning", "zero"],
        default="any",
        help_text="learning: only groups whose scores differ (they carry a GRPO signal); "
        "zero: only groups whose scores are all equal.",
    )


class HistogramQuerySerializer(StepRangeSerializer):
    bins = serializers.IntegerField(min_value=1, max_value=MAX_BINS, default=20)


class LengthsQuerySerializer(StepRangeSerializer):
    limit = serializers.IntegerField(min_value=1, max_value=MAX_POINTS, default=2000)


# --- answers -----------------------------------------------------------------------------


class StepCountSerializer(serializers.Serializer):
    step = serializers.IntegerField()
    samples = serializers.IntegerField()


class RunStepsSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    steps = StepCountSerializer(many=True)


class PromptSummarySerializer(serializers.Serializer):
    prompt = serializers.CharField()
    data_source = serializers.CharField()
    samples = serializers.IntegerField()
    steps = serializers.IntegerField(help_text="Distinct steps that sampled the prompt.")
    first_step = serializers.IntegerField()
    last_step = serializers.IntegerField()
    example_sample = serializers.IntegerField(help_text="Its first sample: open its timeline.")


class RunPromptsSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    prompts = PromptSummarySerializer(many=True)


class PromptTimelineSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    prompt = serializers.CharField()
    samples = RolloutSampleSerializer(many=True)


class GroupSummarySerializer(serializers.Serializer):
    group_id = serializers.CharField()
    samples = serializers.IntegerField()
    score_mean = serializers.FloatField(allow_null=True)
    score_std = serializers.FloatField(allow_null=True, help_text="Population std.")
    score_min = serializers.FloatField(allow_null=True)
    score_max = serializers.FloatField(allow_null=True)
    zero_spread = serializers.BooleanField(help_text="All scores equal: no GRPO signal.")


class StepGroupsSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    step = serializers.IntegerField()
    groups = GroupSummarySerializer(many=True)


class HistogramBinSerializer(serializers.Serializer):
    low = serializers.FloatField()
    high = serializers.FloatField()
    count = serializers.IntegerField()


class ScoreHistogramSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    bins = HistogramBinSerializer(many=True, help_text="Equal width; the last one is closed.")


class LengthPointSerializer(serializers.Serializer):
    sample = serializers.IntegerField()
    step = serializers.IntegerField()
    response_length = serializers.IntegerField()
    score = serializers.FloatField()
    truncated = serializers.BooleanField(help_text="Stopped at the length limit.")


class LengthPointsSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    points = LengthPointSerializer(many=True)


# --- views -------------------------------------------------------------------------------


def with_labels(samples: QuerySet[RolloutSample]) -> QuerySet[RolloutSample]:
    """What RolloutSampleSerializer reads, without the heavy columns."""
    labels = SampleLabel.objects.select_related("author").order_by("id")
    return (
        samples.prefetch_related(Prefetch("labels", queryset=labels))
        .select_related("reward_version__function")
        .defer("search", "token_data", "turns")
        .annotate(
            token_data_recorded=ExpressionWrapper(
                Q(token_data__isnull=False), output_field=BooleanField()
            )
        )
    )


def valid(serializer_class: type[serializers.Serializer], request: Request) -> dict[str, Any]:
    query = serializer_class(data=request.query_params)
    query.is_valid(raise_exception=True)
    return dict(query.validated_data)


class RunRolloutsViewSet(ProjectScopedViewSet):
    """Rollout review reads of one run: any role of its project may read them."""

    queryset = Run.objects.select_related("project")
    serializer_class = RunStepsSerializer  # for OPTIONS; each action declares its own

    @extend_schema(
        operation_id="runs_rollouts_steps",
        parameters=[StepsQuerySerializer],
        responses={200: RunStepsSerializer, 404: NOT_FOUND},
    )
    def steps(self, request: Request, pk: int) -> Response:
        """The steps that recorded samples, oldest first, with their sample counts."""
        run = self.get_object()
        split = valid(StepsQuerySerializer, request).get("split")
        return Response({"run": run.pk, "steps": [asdict(s) for s in step_counts(run.pk, split)]})

    @extend_schema(
        operation_id="runs_rollouts_prompts",
        parameters=[PromptsQuerySerializer],
        responses={200: RunPromptsSerializer, 400: BAD_QUERY, 404: NOT_FOUND},
    )
    def prompts(self, request: Request, pk: int) -> Response:
        """The run's distinct prompts with their sample counts, most sampled first."""
        run = self.get_object()
        v = valid(PromptsQuerySerializer, request)
        found = distinct_prompts(run.pk, v.get("q", ""), v["limit"])
        return Response({"run": run.pk, "prompts": [asdict(p) for p in found]})

    @extend_schema(
        operation_id="runs_rollouts_timeline",
        parameters=[TimelineQuerySerializer],
        responses={200: PromptTimelineSerializer, 400: BAD_QUERY, 404: NOT_FOUND},
    )
    def timeline(self, request: Request, pk: int) -> Response:
        """Every live sample of this run with the same prompt as `sample`, by step: the
        sample may be another run's, to compare two runs on one prompt."""
        run = self.get_object()
        v = valid(TimelineQuerySerializer, request)
        prompt = (
            RolloutSample.objects.filter(
                pk=v["sample"], run__project__memberships__user=signed_in_user(request)
            )
            .values_list("prompt", flat=True)
            .first()
        )
        if prompt is None:
            raise exceptions.NotFound(f"No sample {v['sample']} in your projects.")
        samples = with_labels(same_prompt_samples(run.pk, prompt, v["limit"]))
        return Response(
            {
                "run": run.pk,
                "prompt": prompt,
                "samples": RolloutSampleSerializer(samples, many=True).data,
            }
        )

    @extend_schema(
        operation_id="runs_rollouts_groups",
        parameters=[GroupsQuerySerializer],
        responses={200: StepGroupsSerializer, 400: BAD_QUERY, 404: NOT_FOUND},
    )
    def groups(self, request: Request, pk: int) -> Response:
        """The groups (one prompt's samples) of one step with their score spread."""
        run = self.get_object()
        v = valid(GroupsQuerySerializer, request)
        groups = step_groups(run.pk, v["step"], MAX_GROUPS)
        if v["signal"] != "any":
            want_zero = v["signal"] == "zero"
            groups = [g for g in groups if g.zero_spread == want_zero]
        rows = [{**asdict(g), "zero_spread": g.zero_spread} for g in groups]
        return Response({"run": run.pk, "step": v["step"], "groups": rows})

    @extend_schema(
        operation_id="runs_rollouts_histogram",
        parameters=[HistogramQuerySerializer],
        responses={200: ScoreHistogramSerializer, 400: BAD_QUERY, 404: NOT_FOUND},
    )
    def histogram(self, request: Request, pk: int) -> Response:
        """Scores of the step range in equal-width bins (non-finite scores left out)."""
        run = self.get_object()
        v = valid(HistogramQuerySerializer, request)
        bins = score_histogram(run.pk, v["steps"], v["bins"])
        return Response({"run": run.pk, "bins": [asdict(b) for b in bins]})

    @extend_schema(
        operation_id="runs_rollouts_lengths",
        parameters=[LengthsQuerySerializer],
        responses={200: LengthPointsSerializer, 400: BAD_QUERY, 404: NOT_FOUND},
    )
    def lengths(self, request: Request, pk: int) -> Response:
        """Response length vs score of the newest samples of the step range."""
        run = self.get_object()
        v = valid(LengthsQuerySerializer, request)
        points = length_score_points(run.pk, v["steps"], v["limit"])
        return Response({"run": run.pk, "points": [asdict(p) for p in points]})


ROUTES = ("steps", "prompts", "timeline", "groups", "histogram", "lengths")

"""Filters of the rollout sample list (django-filter), documented in the API schema."""

from __future__ import annotations

from typing import Any

import django_filters.rest_framework as filters
from django import forms
from django.contrib.postgres.search import SearchQuery
from django.db.models import Exists, OuterRef, QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework.exceptions import ValidationError

from studio.telemetry.ingest.records import MAX_TURNS
from studio.telemetry.models import RolloutSample, SampleLabel
from studio.telemetry.series import STEP_MAX

MAX_GROUP_IDS = 100
SEARCH_CONFIG = "english"  # the configuration the search trigger (migration 0002) uses


@extend_schema_field(OpenApiTypes.INT)
class IntegerFilter(filters.NumberFilter):
    field_class = forms.IntegerField


@extend_schema_field(OpenApiTypes.DOUBLE)
class FloatFilter(filters.NumberFilter):
    field_class = forms.FloatField


class StrictBooleanField(forms.NullBooleanField):
    """true/false (or 1/0); anything else is an error, not silently ignored."""

    def to_python(self, value: Any) -> bool | None:  # type: ignore[override]
        if value in (None, ""):
            return None
        if value in (True, "true", "True", "1"):
            return True
        if value in (False, "false", "False", "0"):
            return False
        raise forms.ValidationError(f"Use true or false, not {value!r:.40}.", code="invalid")


@extend_schema_field(OpenApiTypes.BOOL)
class StrictBooleanFilter(filters.BooleanFilter):
    field_class = StrictBooleanField

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("widget", forms.TextInput)  # BooleanWidget maps unknown words to None
        super().__init__(*args, **kwargs)


class SampleFilter(filters.FilterSet):
    run = IntegerFilter(field_name="run_id", required=True, min_value=1, help_text="Run id.")
    step_min = IntegerFilter(field_name="step", lookup_expr="gte", min_value=0, max_value=STEP_MAX)
    step_max = IntegerFilter(field_name="step", lookup_expr="lte", min_value=0, max_value=STEP_MAX)
    score_min = FloatFilter(field_name="score", lookup_expr="gte", help_text="Lowest reward.")
    score_max = FloatFilter(field_name="score", lookup_expr="lte", help_text="Highest reward.")
    data_source = filters.CharFilter(max_length=100)
    split = filters.CharFilter(max_length=8, help_text="train or val.")
    group_id = filters.CharFilter(max_length=100)
    groups = filters.CharFilter(
        method="filter_groups",
        max_length=2000,
        help_text="Comma-separated group ids (at most 100), e.g. an alert's zero-spread groups.",
    )
    signal = filters.ChoiceFilter(
        method="filter_signal",
        choices=[("learning", "learning"), ("zero", "zero")],
        help_text="learning: only groups whose scores differ (a GRPO signal); zero: only "
        "groups whose scores are all equal (at their step).",
    )
    reward_version = IntegerFilter(field_name="reward_version_id", min_value=1)
    reward_version_number = IntegerFilter(
        field_name="reward_version__number",
        min_value=1,
        help_text="Samples scored by version N of a reward function (v2: 2).",
    )
    turns_min = IntegerFilter(
        field_name="num_turns",
        lookup_expr="gte",
        min_value=0,
        max_value=MAX_TURNS,
        help_text="At least this many turns (1: only multi-turn episodes).",
    )
    label = filters.CharFilter(method="filter_label", max_length=64, help_text="Has this label.")
    has_error = StrictBooleanFilter(method="filter_has_error", help_text="Reward errored.")
    q = filters.CharFilter(
        method="filter_text",
        max_length=200,
        help_text='Full-text search of prompt and response (web syntax: words, "a phrase", '
        "or, -word).",
    )

    class Meta:
        model = RolloutSample
        fields: list[str] = []

    def filter_label(self, queryset: QuerySet[RolloutSample], name: str, value: str) -> Any:
        labelled = SampleLabel.objects.filter(sample=OuterRef("pk"), label=value)
        return queryset.filter(Exists(labelled))

    def filter_groups(self, queryset: QuerySet[RolloutSample], name: str, value: str) -> Any:
        wanted = list(dict.fromkeys(g.strip() for g in value.split(",") if g.strip()))
        if len(wanted) > MAX_GROUP_IDS:
            raise ValidationError(
                {"groups": [f"{len(wanted)} group ids given; at most {MAX_GROUP_IDS}."]}
            )
        return queryset.filter(group_id__in=wanted)

    def filter_signal(self, queryset: QuerySet[RolloutSample], name: str, value: str) -> Any:
        # A group's spread is max - min of its step's live scores; the (run, group_id,
        # step) index finds a sample's group mates.
        mates = RolloutSample.objects.filter(
            run_id=OuterRef("run_id"),
            group_id=OuterRef("group_id"),
            step=OuterRef("step"),
            superseded=False,
        )
        differs = Exists(mates.exclude(score=OuterRef("score")))
        return queryset.filter(differs) if value == "learning" else queryset.exclude(differs)

    def filter_has_error(self, queryset: QuerySet[RolloutSample], name: str, value: bool) -> Any:
        return queryset.exclude(error="") if value else queryset.filter(error="")

    def filter_text(self, queryset: QuerySet[RolloutSample], name: str, value: str) -> Any:
        query = SearchQuery(value, search_type="websearch", config=SEARCH_CONFIG)
        return queryset.filter(search=query)

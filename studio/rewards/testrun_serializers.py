"""Serializers of reward test-runs: the requests (synchronous and queued) and the results."""

from __future__ import annotations

import json
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from studio.datasets.serializers import BinSerializer
from studio.rewards.models import RewardTestRun
from studio.rewards.testrun import MAX_ROWS
from trainer.config.reward_kwargs import MAX_KWARGS_BYTES, kwargs_problem
from trainer.config.sampling import DEFAULT_SAMPLING

MAX_TIMEOUT_S = 10.0
MAX_SAMPLES_PER_PROMPT = 16
MAX_NEW_TOKENS = 512
# Pasted completions, as JSON; under Django's 2.5 MB request body limit, so this clear
# message is what a too-large paste gets.
MAX_COMPLETIONS_BYTES = 2 * 1024**2
Source = RewardTestRun.Source


class CompletionSerializer(serializers.Serializer):
    solution_str = serializers.CharField(
        allow_blank=True, trim_whitespace=False, max_length=65536, help_text="The response."
    )
    ground_truth = serializers.JSONField(help_text="The reference answer, any JSON value.")
    data_source = serializers.CharField(max_length=200, default="default")
    extra_info = serializers.DictField(default=dict)


class TestInputSerializer(serializers.Serializer):
    """The fields shared by the synchronous test and a queued test-run."""

    completions = CompletionSerializer(
        many=True,
        required=False,
        max_length=MAX_ROWS,  # type: ignore[call-arg]  # (ListSerializer options)
        min_length=1,
        help_text=f"Pasted completions to score (at most {MAX_ROWS}).",
    )
    dataset_version = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text="Id of a dataset version of this project whose rows are scored.",
    )
    rows = serializers.IntegerField(
        min_value=1, max_value=MAX_ROWS, default=20, help_text="Dataset rows to use."
    )
    offset = serializers.IntegerField(min_value=0, default=0, help_text="First dataset row.")
    solution_template = serializers.CharField(
        max_length=1000,
        default="{ground_truth}",
        trim_whitespace=False,
        help_text="How a reference answer becomes a response, e.g. `#### {ground_truth}`.",
    )
    timeout_s = serializers.FloatField(
        min_value=0.1, max_value=MAX_TIMEOUT_S, default=2.0, help_text="Per-call time limit."
    )
    kwargs = serializers.DictField(
        default=dict,
        help_text="Keyword arguments passed to every call, as a run's `reward.kwargs` (verl's "
        f"`reward_kwargs`): JSON values, at most {MAX_KWARGS_BYTES} bytes.",
    )

    def validate_kwargs(self, value: dict[str, Any]) -> dict[str, Any]:
        problem = kwargs_problem(value)
        if problem:
            raise serializers.ValidationError(problem)
        return value

    def validate_completions(self, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        size = len(json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass"))
        if size > MAX_COMPLETIONS_BYTES:
            raise serializers.ValidationError(
                f"The completions take {size} bytes as JSON; at most {MAX_COMPLETIONS_BYTES}."
            )
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "{ground_truth}" not in attrs["solution_template"]:
            raise serializers.ValidationError(
                {"solution_template": ["It must contain the placeholder {ground_truth}."]}
            )
        return attrs


class RewardTestRequestSerializer(TestInputSerializer):
    """The synchronous test: pasted completions, or dataset rows with their references."""

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("completions" in attrs) == ("dataset_version" in attrs):
            raise serializers.ValidationError(
                "Give either `completions` or `dataset_version` (with `rows`), not both. "
                "To score completions sampled from a model, start a test-run "
                "(POST /api/reward-test-runs/)."
            )
        return super().validate(attrs)


class RewardTestRunCreateSerializer(TestInputSerializer):
    reward_version = serializers.IntegerField(
        min_value=1, help_text="Id of the reward version to test."
    )
    # The metaclass moves declared fields off the class; `Field.source` is not shadowed.
    source = serializers.ChoiceField(  # type: ignore[assignment]
        choices=Source.choices,
        help_text="Where the responses come from: `references` (the dataset's reference "
        "answers through `solution_template`), `completions` (pasted), `demo_model` or "
        "`checkpoint` (sampled for the dataset's prompts).",
    )
    checkpoint = serializers.IntegerField(
        required=False, min_value=1, help_text="Source `checkpoint`: id of a run's checkpoint."
    )
    samples_per_prompt = serializers.IntegerField(
        min_value=1,
        max_value=MAX_SAMPLES_PER_PROMPT,
        default=DEFAULT_SAMPLING.n,
        help_text=f"Sampled sources: completions per prompt (rows x this <= {MAX_ROWS}).",
    )
    temperature = serializers.FloatField(
        min_value=0.0, max_value=2.0, default=DEFAULT_SAMPLING.temperature
    )
    top_p = serializers.FloatField(min_value=0.01, max_value=1.0, default=DEFAULT_SAMPLING.top_p)
    top_k = serializers.IntegerField(min_value=0, max_value=1000, default=DEFAULT_SAMPLING.top_k)
    max_new_tokens = serializers.IntegerField(
        min_value=1, max_value=MAX_NEW_TOKENS, default=DEFAULT_SAMPLING.max_new_tokens
    )
    seed = serializers.IntegerField(min_value=0, max_value=2**31 - 1, default=0)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        source = attrs["source"]
        needs = {
            Source.REFERENCES: {"dataset_version"},
            Source.COMPLETIONS: {"completions"},
            Source.DEMO_MODEL: {"dataset_version"},
            Source.CHECKPOINT: {"dataset_version", "checkpoint"},
        }[source]
        errors: dict[str, list[str]] = {}
        for name in sorted({"completions", "dataset_version", "checkpoint"}):
            if name in needs and name not in attrs:
                errors[name] = [f"Source {source!r} needs `{name}`."]
            elif name not in needs and name in attrs:
                errors[name] = [f"Source {source!r} does not use `{name}`; leave it out."]
        sampled = source in (Source.DEMO_MODEL, Source.CHECKPOINT)
        if sampled and attrs["rows"] * attrs["samples_per_prompt"] > MAX_ROWS:
            errors["samples_per_prompt"] = [
                f"{attrs['rows']} rows x {attrs['samples_per_prompt']} samples per prompt is "
                f"{attrs['rows'] * attrs['samples_per_prompt']} completions; at most {MAX_ROWS}."
            ]
        if errors:
            raise serializers.ValidationError(errors)
        return super().validate(attrs)


class RewardTestRowSerializer(serializers.Serializer):
    index = serializers.IntegerField(help_text="Position in `completions`, or the dataset row.")
    sample = serializers.IntegerField(
        allow_null=True, help_text="Sampled sources: which completion of the prompt."
    )
    finish_reason = serializers.CharField(
        allow_blank=True, help_text="Sampled sources: eos, stop or length."
    )
    data_source = serializers.CharField()
    prompt = serializers.CharField(allow_null=True, help_text="Dataset rows: the prompt text.")
    solution_str = serializers.CharField(allow_blank=True)
    ground_truth = serializers.JSONField()
    score = serializers.FloatField(help_text="0.0 when the call failed.")
    components = serializers.DictField(child=serializers.FloatField())
    extra = serializers.DictField(
        child=serializers.JSONField(),
        required=False,
        help_text="The return's extra info: its strings, None, lists and dicts (numbers and "
        "booleans are `components`).",
    )
    error = serializers.CharField(allow_blank=True, help_text="Why the call failed; empty if ok.")
    elapsed_ms = serializers.FloatField()
    output = serializers.CharField(allow_blank=True, help_text="What the function printed.")
    skipped = serializers.BooleanField(help_text="Not run: the time budget ran out first.")


class RewardTestSummarySerializer(serializers.Serializer):
    count = serializers.IntegerField()
    scored = serializers.IntegerField()
    failed = serializers.IntegerField(help_text="Rows whose call failed (see their `error`).")
    skipped = serializers.IntegerField()
    error_rate = serializers.FloatField(help_text="Errors over rows run.")
    mean = serializers.FloatField(allow_null=True)
    std = serializers.FloatField(allow_null=True, help_text="Population standard deviation.")
    min = serializers.FloatField(allow_null=True)
    max = serializers.FloatField(allow_null=True)
    histogram = BinSerializer(many=True, help_text="10 bins over [min(0, low), max(1, high)].")


class RewardTestReportSerializer(serializers.Serializer):
    rows = RewardTestRowSerializer(many=True)
    summary = RewardTestSummarySerializer()
    isolation = serializers.DictField(
        child=serializers.BooleanField(), help_text="Sandbox protections active on this host."
    )
    load_error = serializers.CharField(allow_blank=True, help_text="Loading the code failed.")
    elapsed_ms = serializers.FloatField()
    budget_s = serializers.FloatField()


class RewardTestResultSerializer(RewardTestReportSerializer):
    """The synchronous test's answer: the report of the test-run it recorded."""

    test_run = serializers.IntegerField(help_text="The recorded test-run (GET it later).")
    function = serializers.IntegerField()
    version = serializers.IntegerField()
    dataset_version = serializers.IntegerField(allow_null=True)


class SamplingParamsSerializer(serializers.Serializer):
    n = serializers.IntegerField(help_text="Completions per prompt.")
    temperature = serializers.FloatField()
    top_p = serializers.FloatField()
    top_k = serializers.IntegerField()
    max_new_tokens = serializers.IntegerField()
    seed = serializers.IntegerField()


class TestRunParamsSerializer(serializers.Serializer):
    rows = serializers.IntegerField()
    offset = serializers.IntegerField()
    solution_template = serializers.CharField()
    timeout_s = serializers.FloatField()
    budget_s = serializers.FloatField(help_text="Wall clock for scoring every row.")
    sampling = SamplingParamsSerializer(help_text="Used by the sampled sources only.")


class ProgressSerializer(serializers.Serializer):
    phase = serializers.ChoiceField(choices=RewardTestRun.Phase.choices)
    done = serializers.IntegerField(help_text="Completions sampled, or rows scored.")
    total = serializers.IntegerField()


class RewardTestRunSummarySerializer(serializers.ModelSerializer):
    """A test-run without its rows (lists)."""

    project = serializers.CharField(source="version.function.project.slug", read_only=True)
    function = serializers.IntegerField(source="version.function_id", read_only=True)
    reward_version = serializers.IntegerField(source="version_id", read_only=True)
    version_number = serializers.IntegerField(source="version.number", read_only=True)
    created_by = serializers.CharField(source="created_by.username", read_only=True)
    params = TestRunParamsSerializer(read_only=True)
    progress = serializers.SerializerMethodField()
    summary = serializers.SerializerMethodField()

    class Meta:
        model = RewardTestRun
        fields = [
            "id",
            "project",
            "function",
            "reward_version",
            "version_number",
            "source",
            "dataset_version",
            "checkpoint",
            "params",
            "status",
            "progress",
            "summary",
            "error",
            "error_code",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields

    @extend_schema_field(ProgressSerializer)
    def get_progress(self, test_run: RewardTestRun) -> dict[str, Any]:
        return {
            "phase": test_run.phase,
            "done": test_run.progress_done,
            "total": test_run.progress_total,
        }

    @extend_schema_field(RewardTestSummarySerializer(allow_null=True))
    def get_summary(self, test_run: RewardTestRun) -> dict[str, Any] | None:
        if hasattr(test_run, "result_summary"):  # lists annotate it instead of loading rows
            summary: dict[str, Any] | None = test_run.result_summary
            return summary
        return test_run.result["summary"] if test_run.result else None


class RewardTestRunSerializer(RewardTestRunSummarySerializer):
    """A test-run with its per-row results once it has them."""

    result = RewardTestReportSerializer(allow_null=True, read_only=True)

    class Meta(RewardTestRunSummarySerializer.Meta):
        fields = [*RewardTestRunSummarySerializer.Meta.fields, "result"]
        read_only_fields = fields

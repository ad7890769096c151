"""What a run reports: metric points, rollout samples (+ labels), logs (the checkpoints it
reports are the run's own: studio.runs.models.Checkpoint).

Every trainer record carries (run, attempt, seq); uniqueness on that key makes
ingest an idempotent upsert, so a retried upload never duplicates anything.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.utils import timezone

from studio.rewards.models import RewardVersion
from studio.runs.models import Run


class MetricPoint(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="metric_points")
    attempt = models.PositiveIntegerField()
    seq = models.BigIntegerField()  # the trainer record that carried this point
    step = models.IntegerField()
    key = models.CharField(max_length=200)
    value = models.FloatField()
    superseded = models.BooleanField(default=False)  # past the step a later attempt resumed at

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "attempt", "seq", "key"], name="metric_point_once"
            )
        ]
        indexes = [
            # Series reads (downsampling, CSV export, key lists) only want live points:
            # a partial index that carries `value` makes them index-only scans.
            models.Index(
                fields=["run", "key", "step"],
                include=["value"],
                condition=models.Q(superseded=False),
                name="metric_live_series",
            )
        ]


class MetricTile(models.Model):
    """Lowest and highest live point of one key over `size` consecutive steps.

    Kept exact by database triggers on MetricPoint (migration 0003), whatever writes
    the points, so downsampled series read a few tiles instead of every point (see
    studio.telemetry.series). Never written by application code.
    """

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=200)
    size = models.PositiveIntegerField()  # steps per tile, one of series.TILE_SIZES
    tile = models.IntegerField()  # covers steps [tile * size, (tile + 1) * size)
    n = models.PositiveIntegerField()  # live points in the tile
    min_step = models.IntegerField()
    min_value = models.FloatField()
    max_step = models.IntegerField()
    max_value = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "key", "size", "tile"], name="metric_tile_once")
        ]


class RolloutSample(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="samples")
    attempt = models.PositiveIntegerField()
    seq = models.BigIntegerField()
    position = models.PositiveIntegerField()  # index of the sample inside its record
    step = models.IntegerField()
    split = models.CharField(max_length=8, default="train")
    group_id = models.CharField(max_length=100)
    data_source = models.CharField(max_length=100)
    prompt = models.TextField()
    response = models.TextField()
    ground_truth = models.TextField(blank=True)
    score = models.FloatField()
    components = models.JSONField(default=dict)
    # The reward's extra info: its dict return's strings, None, lists and dicts (at most
    # 2 KB of JSON, trainer.rewards.contract.MAX_EXTRA_BYTES); db_default keeps the
    # unnest insert and COPY paths working.
    reward_extra = models.JSONField(default=dict, db_default={}, blank=True)
    advantage = models.FloatField(default=0.0)
    prompt_length = models.PositiveIntegerField(default=0)
    response_length = models.PositiveIntegerField(default=0)
    finish_reason = models.CharField(max_length=16, blank=True)
    error = models.TextField(blank=True)
    reward_version = models.ForeignKey(
        RewardVersion, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    token_data = models.JSONField(null=True, blank=True)
    # A multi-turn episode's conversation after the prompt (records.Turn, only the keys a
    # turn had); null for single-turn samples. num_turns lets lists show and filter
    # episodes without reading the conversation; db_default keeps COPY paths working.
    turns = models.JSONField(null=True, blank=True)
    num_turns = models.PositiveIntegerField(default=0, db_default=0)
    # The prompt's row in the data file the run read (0-based; its dataset version's row
    # through the run's split): what a label export copies. Null for samples reported
    # without one (older trainers, prompts from no file).
    source_row = models.PositiveIntegerField(null=True, blank=True)
    # to_tsvector('english', prompt || response), kept current by a database trigger
    # (migration 0002), so every insert path (ingest, bulk_create, COPY) is searchable.
    search = SearchVectorField(null=True)
    superseded = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "attempt", "seq", "position"], name="sample_once"
            )
        ]
        indexes = [
            models.Index(fields=["run", "step", "id"]),
            models.Index(fields=["run", "group_id", "step"]),
            GinIndex(fields=["search"], name="sample_search"),
            # Cursor pages of a run's live samples walk this backwards (ordering -id).
            models.Index(
                fields=["run", "id"],
                condition=models.Q(superseded=False),
                name="sample_live_by_run",
            ),
            # The explorer's score histogram (min, max, then counts per bin over a step
            # range) reads only this: index-only scans, no heap rows (docs/benchmarks.md).
            models.Index(
                fields=["run", "step"],
                include=["score"],
                condition=models.Q(superseded=False),
                name="sample_live_step_score",
            ),
        ]


# Labels of which a user gives a sample at most one: a verdict (studio/telemetry/samples/labels.py
# swaps one for the other).
EXCLUSIVE_LABELS = ("good", "bad")


class SampleLabel(models.Model):
    sample = models.ForeignKey(RolloutSample, on_delete=models.CASCADE, related_name="labels")
    label = models.CharField(max_length=64)  # e.g. "reward-hacking", "good", "bad-format"
    note = models.TextField(blank=True)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["sample", "label", "author"], name="label_once_per_author"
            ),
            models.UniqueConstraint(
                fields=["sample", "author"],
                condition=models.Q(label__in=EXCLUSIVE_LABELS),
                name="one_verdict_per_author",
            ),
        ]


class SampleQuestion(models.Model):
    """What an "Ask the checkpoints" evaluation asks (studio/evaluations/questions.py):
    the prompt of one rollout sample, for every checkpoint of the sample's run. The
    sample's facts are copied, so the evaluation stays explained if the sample goes."""

    evaluation = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="question")
    sample = models.ForeignKey(
        RolloutSample, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="+")  # the sample's
    step = models.IntegerField()
    split = models.CharField(max_length=8)  # train or val: which rows of the run it is from
    group_id = models.CharField(max_length=100)  # the prompt's id: evaluation.prompt_ids
    prompt = models.TextField()  # as the sample's run rendered it


class LogLine(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="log_lines")
    attempt = models.PositiveIntegerField()
    seq = models.BigIntegerField()
    level = models.CharField(max_length=16)
    message = models.TextField()
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["run", "attempt", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["run", "attempt", "seq"], name="log_line_once")
        ]


class RecordKind(models.TextChoices):
    STATUS = "status", "Status"
    METRICS = "metrics", "Metrics"
    SAMPLES = "samples", "Samples"
    LOG = "log", "Log"
    CHECKPOINT = "checkpoint", "Checkpoint"
    STARTUP = "startup", "Startup phases"


class IngestedRecord(models.Model):
    """One trainer record as received: the ledger behind idempotent ingest and SSE resume.

    Its unique (run, attempt, seq) is the idempotency key: a retried record conflicts here
    and nothing of it is written again. Streams replay from it in (attempt, seq) order.
    The content lives in the per-kind tables (points, samples, log lines), except for
    status, checkpoint and startup records, whose few fields are kept in `data`.
    """

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="+")
    attempt = models.PositiveIntegerField()
    seq = models.BigIntegerField()
    kind = models.CharField(max_length=16, choices=RecordKind.choices)
    step = models.IntegerField(null=True, blank=True)  # None: logs and status changes
    emitted_at = models.FloatField()  # the trainer's clock (unix seconds) when it emitted
    received_at = models.DateTimeField(default=timezone.now)
    data = models.JSONField(null=True, blank=True)  # status, checkpoint and startup records
    superseded = models.BooleanField(default=False)  # past the step a later attempt resumed at

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "attempt", "seq"], name="ingested_record_once")
        ]


class AlertSeverity(models.TextChoices):
    WARNING = "warning", "Warning"
    CRITICAL = "critical", "Critical"


class AlertKind(models.TextChoices):
    ZERO_SPREAD_GROUPS = "zero_spread_groups", "GRPO groups without reward spread"
    RESPONSE_LENGTH_DRIFT = "response_length_drift", "Response length drift"
    REWARD_COMPONENT_DOMINANCE = "reward_component_dominance", "One reward component dominates"
    KL_SPIKE = "kl_spike", "KL spike"
    ENTROPY_SPIKE = "entropy_spike", "Entropy spike"
    REWARD_ERRORS = "reward_errors", "Reward function errors"


class RunAlert(models.Model):
    """A sign of reward hacking or collapse seen in a run's metric stream
    (studio.telemetry.alerts.rules). Derived data: recomputed, never edited."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="alerts")
    attempt = models.PositiveIntegerField()
    seq = models.BigIntegerField()  # the metrics record that raised it (its SSE event id)
    step = models.IntegerField()
    kind = models.CharField(max_length=32, choices=AlertKind.choices)
    severity = models.CharField(max_length=16, choices=AlertSeverity.choices)
    message = models.TextField()
    values = models.JSONField(default=dict)  # the numbers the message quotes
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["run", "step", "kind"]
        constraints = [
            models.UniqueConstraint(fields=["run", "kind", "step"], name="run_alert_once")
        ]
        indexes = [models.Index(fields=["run", "attempt", "seq"], name="run_alert_by_record")]

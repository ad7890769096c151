"""The evaluations app: runs of kind `evaluation`, composed here and stored, queued and
cancelled by the runs service (studio.runs.service). It has no models of its own: an
evaluation is a Run, and the sample an "Ask the checkpoints" evaluation asks about is
telemetry's SampleQuestion."""

from django.apps import AppConfig


class EvaluationsConfig(AppConfig):
    name = "studio.evaluations"
    label = "evaluations"
    verbose_name = "Evaluations"

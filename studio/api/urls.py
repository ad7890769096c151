"""All REST routes under /api/."""

from django.urls import path
from rest_framework.renderers import JSONRenderer
from rest_framework.routers import DefaultRouter

from studio.api.datasets.columns import DatasetColumnsView
from studio.api.datasets.datasets import DatasetVersionViewSet, DatasetViewSet
from studio.api.datasets.diff import DatasetDiffView
from studio.api.datasets.project_versions import ProjectDatasetVersionViewSet
from studio.api.evaluations.evaluations import EvaluationViewSet
from studio.api.model_registry.models import ModelViewSet
from studio.api.playground.playground import ExchangeEventsView, PlaygroundViewSet
from studio.api.playground.servers import ServerBootstrapView, ServerNextView, ServerReportView
from studio.api.projects.invitations import InvitationViewSet
from studio.api.projects.projects import ApiTokenViewSet, AuditEventViewSet, ProjectViewSet
from studio.api.rewards.checks import RewardCheckView
from studio.api.rewards.comparisons import RewardComparisonViewSet
from studio.api.rewards.functions import (
    RewardFunctionViewSet,
    RewardTemplateViewSet,
    RewardVersionViewSet,
)
from studio.api.rewards.test_runs import RewardTestRunViewSet
from studio.api.rollouts.rollouts import ROUTES as ROLLOUT_ROUTES
from studio.api.rollouts.rollouts import RunRolloutsViewSet
from studio.api.rollouts.samples import RunSamplesViewSet, SampleViewSet
from studio.api.runs.details import (
    RunAlertsViewSet,
    RunCheckpointsViewSet,
    RunLogsViewSet,
    TarRenderer,
)
from studio.api.runs.metrics import CsvRenderer, MetricsQueryView, RunMetricsViewSet
from studio.api.runs.queue import ProjectQueueView
from studio.api.runs.reports import HtmlRenderer, RunReportViewSet
from studio.api.runs.runs import ConfigPresetsView, ConfigSchemaView, ConfigValidateView, RunViewSet
from studio.api.streams.streams import ProjectEventsView, RunEventsView
from studio.api.sweeps.sweeps import SweepViewSet
from studio.api.trainer_ingest.endpoints import (
    IngestBootstrapView,
    IngestDatasetView,
    IngestRecordsView,
)

router = DefaultRouter(trailing_slash=True)
router.register("projects", ProjectViewSet, basename="project")
router.register("tokens", ApiTokenViewSet, basename="token")
router.register("invitations", InvitationViewSet, basename="invitation")
router.register("audit", AuditEventViewSet, basename="audit")
router.register("datasets", DatasetViewSet, basename="dataset")
router.register(
    r"datasets/(?P<dataset_id>[0-9]+)/versions", DatasetVersionViewSet, basename="dataset-version"
)
router.register(
    "dataset-versions", ProjectDatasetVersionViewSet, basename="project-dataset-version"
)
router.register("reward-functions", RewardFunctionViewSet, basename="reward-function")
router.register(
    r"reward-functions/(?P<function_id>[0-9]+)/versions",
    RewardVersionViewSet,
    basename="reward-version",
)
router.register("reward-templates", RewardTemplateViewSet, basename="reward-template")
router.register("reward-test-runs", RewardTestRunViewSet, basename="reward-test-run")
router.register("runs", RunViewSet, basename="run")
router.register("evaluations", EvaluationViewSet, basename="evaluation")
router.register("sweeps", SweepViewSet, basename="sweep")
router.register("models", ModelViewSet, basename="model")
router.register("samples", SampleViewSet, basename="sample")

urlpatterns = router.urls
urlpatterns += [path("config/schema", ConfigSchemaView.as_view(), name="config-schema")]
urlpatterns += [path("config/presets", ConfigPresetsView.as_view(), name="config-presets")]
urlpatterns += [path("config/validate", ConfigValidateView.as_view(), name="config-validate")]
urlpatterns += [
    path("metrics/query", MetricsQueryView.as_view(), name="metrics-query"),
    path(
        "runs/<int:pk>/metrics/keys",
        RunMetricsViewSet.as_view({"get": "metric_keys"}),
        name="run-metric-keys",
    ),
    path(
        "runs/<int:pk>/metrics.csv",
        RunMetricsViewSet.as_view(
            {"get": "metrics_csv"}, renderer_classes=[JSONRenderer, CsvRenderer]
        ),
        name="run-metrics-csv",
    ),
    path(
        "runs/<int:pk>/export-labelled",
        RunSamplesViewSet.as_view({"post": "export_labelled"}),
        name="run-export-labelled",
    ),
]
urlpatterns += [
    # The editor's and the upload form's helpers, and the A/B of two reward versions.
    path("reward-checks/", RewardCheckView.as_view(), name="reward-checks"),
    path(
        "reward-comparisons/",
        RewardComparisonViewSet.as_view({"get": "compare", "post": "start"}),
        name="reward-comparisons",
    ),
    path("dataset-columns/", DatasetColumnsView.as_view(), name="dataset-columns"),
    path("datasets/<int:id>/diff/", DatasetDiffView.as_view(), name="dataset-diff"),
    path("queue/", ProjectQueueView.as_view({"get": "summary"}), name="queue"),
]
urlpatterns += [
    # A run's alerts, log lines and checkpoints (studio/api/runs/details.py).
    path("runs/<int:pk>/alerts/", RunAlertsViewSet.as_view({"get": "list"}), name="run-alerts"),
    path("runs/<int:pk>/logs/", RunLogsViewSet.as_view({"get": "list"}), name="run-logs"),
    path(
        "runs/<int:pk>/checkpoints/",
        RunCheckpointsViewSet.as_view({"get": "list"}),
        name="run-checkpoints",
    ),
    path(
        "runs/<int:pk>/checkpoints/<int:checkpoint_id>/download",
        RunCheckpointsViewSet.as_view(
            {"get": "download"}, renderer_classes=[JSONRenderer, TarRenderer]
        ),
        name="run-checkpoint-download",
    ),
]
urlpatterns += [
    # Shareable HTML reports (studio/api/runs/reports.py).
    path(
        "runs/<int:pk>/report",
        RunReportViewSet.as_view(
            {"get": "run_report"}, renderer_classes=[JSONRenderer, HtmlRenderer]
        ),
        name="run-report",
    ),
    path(
        "runs/report",
        RunReportViewSet.as_view(
            {"get": "compare_report"}, renderer_classes=[JSONRenderer, HtmlRenderer]
        ),
        name="runs-report",
    ),
]
urlpatterns += [
    # Rollout review reads of one run (studio/api/rollouts/rollouts.py).
    path(
        f"runs/<int:pk>/rollouts/{name}",
        RunRolloutsViewSet.as_view({"get": name}),
        name=f"run-rollouts-{name}",
    )
    for name in ROLLOUT_ROUTES
]
urlpatterns += [
    # Live streams (Server-Sent Events) and the trainer's ingest (docs/telemetry.md).
    path("runs/<int:pk>/events", RunEventsView.as_view(), name="run-events"),
    path("projects/<slug:slug>/events", ProjectEventsView.as_view(), name="project-events"),
    path("ingest/runs/<int:run_id>/records", IngestRecordsView.as_view(), name="ingest-records"),
    path("ingest/runs/<int:run_id>/dataset", IngestDatasetView.as_view(), name="ingest-dataset"),
    path(
        "ingest/runs/<int:run_id>/bootstrap",
        IngestBootstrapView.as_view(),
        name="ingest-bootstrap",
    ),
]
urlpatterns += [
    # The chat playground (studio/api/playground/playground.py) and its model servers' endpoints.
    path(
        "playground/models/",
        PlaygroundViewSet.as_view({"get": "models"}),
        name="playground-models",
    ),
    path("playground/warm/", PlaygroundViewSet.as_view({"post": "warm"}), name="playground-warm"),
    path(
        "playground/exchanges/",
        PlaygroundViewSet.as_view({"post": "send"}),
        name="playground-exchanges",
    ),
    path(
        "playground/exchanges/<slug:exchange_id>/stop/",
        PlaygroundViewSet.as_view({"post": "stop"}),
        name="playground-exchange-stop",
    ),
    path(
        "playground/exchanges/<slug:exchange_id>/events",
        ExchangeEventsView.as_view(),
        name="playground-exchange-events",
    ),
    path(
        "playground/servers/<slug:server_id>/bootstrap",
        ServerBootstrapView.as_view(),
        name="playground-server-bootstrap",
    ),
    path(
        "playground/servers/<slug:server_id>/next",
        ServerNextView.as_view(),
        name="playground-server-next",
    ),
    path(
        "playground/servers/<slug:server_id>/report",
        ServerReportView.as_view(),
        name="playground-server-report",
    ),
]

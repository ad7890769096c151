from django.apps import AppConfig


class TelemetryConfig(AppConfig):
    name = "studio.telemetry"
    label = "telemetry"

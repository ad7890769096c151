from django.contrib import admin

from studio.telemetry.models import LogLine, MetricPoint, RolloutSample, RunAlert, SampleLabel


@admin.register(MetricPoint)
class MetricPointAdmin(admin.ModelAdmin):
    list_display = ["run", "attempt", "step", "key", "value"]
    list_filter = ["key"]


@admin.register(RolloutSample)
class RolloutSampleAdmin(admin.ModelAdmin):
    list_display = [
        "run",
        "step",
        "group_id",
        "data_source",
        "score",
        "response_length",
        "num_turns",
    ]
    search_fields = ["prompt", "response"]


admin.site.register(SampleLabel)
admin.site.register(LogLine)


@admin.register(RunAlert)
class RunAlertAdmin(admin.ModelAdmin):
    list_display = ["run", "step", "kind", "severity", "attempt"]
    list_filter = ["kind", "severity"]

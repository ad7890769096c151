from django.contrib import admin

from studio.runs.models import Checkpoint, Run, RunAttempt, RunStatusChange


class RunAttemptInline(admin.TabularInline):
    model = RunAttempt
    extra = 0


class RunStatusChangeInline(admin.TabularInline):
    model = RunStatusChange
    extra = 0
    readonly_fields = ["from_status", "to_status", "reason", "actor", "at"]


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "status", "priority", "created_by", "created_at"]
    list_filter = ["status"]
    search_fields = ["name"]
    inlines = [RunAttemptInline, RunStatusChangeInline]


admin.site.register(Checkpoint)

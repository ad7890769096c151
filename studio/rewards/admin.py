from django.contrib import admin

from studio.rewards.models import RewardFunction, RewardTestRun, RewardVersion


class RewardVersionInline(admin.TabularInline):
    model = RewardVersion
    extra = 0
    fields = ("number", "entrypoint", "code_hash", "message", "author", "created_at")
    readonly_fields = fields


@admin.register(RewardFunction)
class RewardFunctionAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "created_by", "created_at"]
    search_fields = ["name"]
    inlines = [RewardVersionInline]


@admin.register(RewardTestRun)
class RewardTestRunAdmin(admin.ModelAdmin):
    list_display = ["id", "version", "source", "status", "phase", "error_code", "created_at"]
    list_filter = ["status", "source"]
    readonly_fields = ["version", "dataset_version", "checkpoint", "created_by"]

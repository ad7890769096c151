from django.contrib import admin

from studio.datasets.models import Dataset, DatasetVersion


class DatasetVersionInline(admin.TabularInline):
    model = DatasetVersion
    extra = 0
    fields = ("number", "data_format", "row_count", "size_bytes", "checksum", "created_at")
    readonly_fields = fields


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "created_by", "created_at"]
    search_fields = ["name"]
    inlines = [DatasetVersionInline]

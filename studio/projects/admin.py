from django.contrib import admin

from studio.projects.models import ApiToken, AuditEvent, Invitation, Membership, Project


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "created_by", "created_at"]
    search_fields = ["name", "slug"]
    inlines = [MembershipInline]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["name", "user", "prefix", "scopes", "created_at", "expires_at", "revoked_at"]
    readonly_fields = ["prefix", "token_hash", "last_used_at"]


@admin.register(Invitation)
class InvitationAdmin(admin.ModelAdmin):
    list_display = ["username", "project", "role", "status", "invited_by", "expires_at"]
    list_filter = ["status"]
    search_fields = ["username", "project__slug"]


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ["at", "project", "actor", "action", "object_type", "object_id"]
    list_filter = ["action"]

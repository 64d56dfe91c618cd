"""Admin for artifacts: by app, user, session and name, with every version's size and mime type (read-only)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from artifacts_app.models import Artifact, ArtifactVersion


class VersionInline(admin.TabularInline):
    model = ArtifactVersion
    fields = ("version", "mime_type", "size", "custom_metadata", "create_time")
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ("-version",)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Artifact)
class ArtifactAdmin(admin.ModelAdmin):
    list_display = ("filename", "app_name", "user_id", "session_id", "latest_version", "created_at")
    list_filter = ("app_name", "user_id")
    search_fields = ("filename", "session_id")
    readonly_fields = ("app_name", "user_id", "session_id", "filename", "latest_version", "created_at")
    inlines = [VersionInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # artifacts are saved by agents

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

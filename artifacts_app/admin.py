"""Admin for artifacts: by app, user, session and name, with every version's size and mime type (read-only)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.html import format_html

from artifacts_app.api import content_of
from artifacts_app.models import Artifact, ArtifactVersion
from cognizes.access.admin_views import permitted_view
from cognizes.access.stored_content import inert_response

PREVIEW_CHARS = 300


class VersionInline(admin.TabularInline):
    model = ArtifactVersion
    fields = ("version", "mime_type", "size", "custom_metadata", "create_time", "preview")
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ("-version",)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="content")
    def preview(self, version: ArtifactVersion) -> str:
        """An image shown small, the start of a text, and a download link."""
        url = reverse("admin:artifacts_app_artifact_content", args=[version.artifact_id, version.version])
        link = format_html('<a href="{}">download</a>', url)
        if version.mime_type.startswith("image/"):
            return format_html('<img src="{}" alt="" style="max-height: 120px; display: block">{}', url, link)
        if version.mime_type.startswith("text/") and "text" in version.part:
            text = version.part["text"][:PREVIEW_CHARS]
            return format_html("<pre style='white-space: pre-wrap'>{}</pre>{}", text, link)
        if "file_data" in version.part:
            return version.part["file_data"].get("file_uri", "")
        return link


@admin.register(Artifact)
class ArtifactAdmin(admin.ModelAdmin):
    list_display = ("filename", "app_name", "user_id", "session_id", "latest_version", "created_at")
    list_filter = ("app_name", "user_id")
    search_fields = ("filename", "session_id")
    readonly_fields = ("app_name", "user_id", "session_id", "filename", "latest_version", "created_at")
    inlines = [VersionInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # artifacts are saved by agents

    def get_urls(self) -> list:
        content = permitted_view(self, self.content_view)
        return [
            path("<int:pk>/versions/<int:version>/content/", content, name="artifacts_app_artifact_content"),
            *super().get_urls(),
        ]

    def content_view(self, request: HttpRequest, pk: int, version: int) -> HttpResponse:
        """A version's content as a download that runs nothing (cognizes.access.stored_content), to who may view
        artifacts."""
        stored = get_object_or_404(ArtifactVersion, artifact_id=pk, version=version)
        content = content_of(stored)
        if content is None:
            raise Http404("A file reference: its content is not stored here.")
        filename = stored.artifact.filename.removeprefix("user:")
        return inert_response(content[0], mime_type=content[1], filename=filename)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

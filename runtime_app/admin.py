"""A2A tasks in the admin: what remote agents asked of this deployment's agents, beside the sessions they ran in."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from django.contrib import admin
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from runtime_app.models import A2aTask


@admin.register(A2aTask)
class A2aTaskAdmin(admin.ModelAdmin):
    list_display = ("task_id", "app_name", "user_id", "session_link", "state", "updated_at")
    list_filter = ("app_name", "state")
    search_fields = ("task_id", "context_id", "user_id")
    fields = ("app_name", "user_id", "task_id", "session_link", "state", "updated_at", "task")
    readonly_fields = fields

    @admin.display(description="session (A2A context)", ordering="context_id")
    def session_link(self, task: A2aTask) -> str:
        query = urlencode({"app_name": task.app_name, "user_id": task.user_id, "session_id": task.context_id})
        return format_html('<a href="{}?{}">{}</a>', reverse("admin:sessions_app_session_changelist"), query,
                           task.context_id)

    @admin.display(description="task")
    def task(self, task: A2aTask) -> str:
        return format_html("<pre>{}</pre>", json.dumps(task.data, indent=2, ensure_ascii=False))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # tasks are made by A2A calls

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

"""A2A tasks in the admin: what remote agents asked of this deployment's agents, beside the sessions they ran in."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from runtime_app.models import A2aTask


def _state_label(state: str) -> str:
    """``TASK_STATE_INPUT_REQUIRED`` as a person says it: "input required"."""
    return state.removeprefix("TASK_STATE_").replace("_", " ").lower()


class StateFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        from a2a.types import TaskState  # here: a2a need not load with Django (issue 43)

        return [(name, _state_label(name)) for name in TaskState.keys() if name != "TASK_STATE_UNSPECIFIED"]  # noqa: SIM118  (a protobuf enum wrapper has keys() but no iteration)

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        return queryset.filter(state=self.value()) if self.value() else queryset


@admin.register(A2aTask)
class A2aTaskAdmin(admin.ModelAdmin):
    list_display = ("task_id", "app_name", "user_id", "session_link", "state_label", "updated_at")
    list_filter = ("app_name", StateFilter)
    search_fields = ("task_id", "context_id", "user_id")
    fields = ("app_name", "user_id", "task_id", "session_link", "state_label", "updated_at", "task")
    readonly_fields = fields

    @admin.display(description="state", ordering="state")
    def state_label(self, task: A2aTask) -> str:
        return _state_label(task.state)

    @admin.display(description="session (A2A context)", ordering="context_id")
    def session_link(self, task: A2aTask) -> str:
        query = urlencode({"app_name": task.app_name, "user_id": task.user_id, "session_id": task.context_id})
        return format_html(
            '<a href="{}?{}">{}</a>', reverse("admin:sessions_app_session_changelist"), query, task.context_id
        )

    @admin.display(description="task")
    def task(self, task: A2aTask) -> str:
        return format_html("<pre>{}</pre>", json.dumps(task.data, indent=2, ensure_ascii=False))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # tasks are made by A2A calls

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


from runtime_app import eval_admin  # noqa: E402, F401  (ADK's eval sets and results: registered there)

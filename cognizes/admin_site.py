"""The admin, opening on an overview of what is happening (cognizes/overview.py) above Django's list of models."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse

from cognizes import overview
from cognizes.access.admin_views import may_view
from knowledge_app.models import Corpus, Document
from memory_app.models import ConsolidationJob, Memory
from sessions_app.models import Session
from tracing_app.models import Trace


class CognizesAdminSite(admin.AdminSite):
    index_template = "admin/overview.html"

    def get_urls(self) -> list:
        """The site's URLs, once every ModelAdmin is registered: the moment to close the actions (below)."""
        self.require_action_permissions()
        return super().get_urls()

    def require_action_permissions(self) -> None:
        """Give every bulk action that names no permission the change permission of its model.

        Django offers such an action to whoever may *view* the list (django-celery-beat's
        run/enable/disable tasks among them): a staff user who may only look would act
        (issue 41 D). Our own actions name theirs; tests/test_admin_permissions.py holds it.
        """
        for model_admin in self._registry.values():
            for function, _, _ in model_admin._get_base_actions():  # type: ignore[attr-defined]  # Django's own
                if not getattr(function, "allowed_permissions", ()):
                    function.allowed_permissions = ("change",)

    def index(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> TemplateResponse:
        """The overview's sections of the models the user may view; nothing is counted for a section not shown."""
        context = {"overview": self.overview(request), **(extra_context or {})}
        return super().index(request, context)

    def overview(self, request: HttpRequest) -> dict[str, Any]:
        """Each section only for a user who may view every model it counts or lists (issue 41 D)."""
        out: dict[str, Any] = {"links": {}}
        if may_view(self, request, Session, Memory, Corpus, Document):
            out["apps"] = overview.app_rows()
            out["show_apps"] = True
        if may_view(self, request, Trace):
            out["failing_traces"] = overview.failing_traces()
            out["show_traces"] = True
        if may_view(self, request, ConsolidationJob):
            out["jobs"], out["failures"] = overview.job_counts(), overview.recent_failures()
            out["processes"], out["processes_problem"] = overview.processes()
            out["show_jobs"] = True
        if may_view(self, request, Document):
            out["documents"], out["failed_documents"] = overview.document_counts(), overview.failed_documents()
            out["show_documents"] = True
        for name, model in LINKS.items():
            if may_view(self, request, model):
                meta = model._meta
                out["links"][name] = reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")
        return out


LINKS = {"sessions": Session, "memories": Memory, "jobs": ConsolidationJob, "corpora": Corpus, "documents": Document}
"""The lists the overview's counts lead to."""

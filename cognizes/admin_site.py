"""The admin, opening on an overview of what is happening (cognizes/overview.py) above Django's list of models."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse

from cognizes import overview


class CognizesAdminSite(admin.AdminSite):
    index_template = "admin/overview.html"

    def index(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> TemplateResponse:
        processes, problem = overview.processes()
        context = {
            "overview": {
                "apps": overview.app_rows(),
                "jobs": overview.job_counts(),
                "failures": overview.recent_failures(),
                "documents": overview.document_counts(),
                "failed_documents": overview.failed_documents(),
                "failing_traces": overview.failing_traces(),
                "processes": processes,
                "processes_problem": problem,
                "links": {
                    "sessions": reverse("admin:sessions_app_session_changelist"),
                    "memories": reverse("admin:memory_app_memory_changelist"),
                    "jobs": reverse("admin:memory_app_consolidationjob_changelist"),
                    "corpora": reverse("admin:knowledge_app_corpus_changelist"),
                    "documents": reverse("admin:knowledge_app_document_changelist"),
                },
            },
            **(extra_context or {}),
        }
        return super().index(request, context)

"""ADK's eval sets, cases and results in the admin: what the team's agents are tested on, and how each run scored.

Read-only (ADK's eval tab and ``adk eval`` write them, through ``runtime_app.evals``), deletable. Every text shown
came from a user or a model, so it goes through ``format_html`` (escaped), never ``mark_safe``.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join

from runtime_app.models import EvalCase, EvalSet, EvalSetResult

_STATUS = {1: "passed", 2: "failed", 3: "not evaluated", 4: "informational"}
"""ADK's ``EvalStatus`` values, as its JSON stores them."""


def _pretty(document: str) -> str:
    return format_html("<pre>{}</pre>", json.dumps(json.loads(document), indent=2, ensure_ascii=False))


def _first_user_text(document: str) -> str:
    """The first thing the user says in a case: how people tell cases apart."""
    case = json.loads(document)
    for invocation in case.get("conversation") or []:
        for part in (invocation.get("userContent") or {}).get("parts") or []:
            if part.get("text"):
                return str(part["text"])[:120]
    scenario = case.get("conversationScenario") or {}
    return str(scenario.get("startingPrompt") or "")[:120]


class _ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # ADK's eval tab and `adk eval` write these

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class EvalCaseInline(admin.TabularInline):
    model = EvalCase
    fields = ("eval_id", "first_message")
    readonly_fields = fields
    extra = 0
    show_change_link = True

    @admin.display(description="first user message")
    def first_message(self, case: EvalCase) -> str:
        return _first_user_text(case.document)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(EvalSet)
class EvalSetAdmin(_ReadOnly):
    list_display = ("eval_set_id", "app_name", "name", "case_count")
    list_filter = ("app_name",)
    search_fields = ("eval_set_id", "name", "description")
    fields = ("app_name", "eval_set_id", "name", "description", "creation_timestamp")
    readonly_fields = fields
    inlines = [EvalCaseInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[EvalSet]:
        return super().get_queryset(request).annotate(case_count=Count("cases"))

    @admin.display(description="cases", ordering="case_count")
    def case_count(self, eval_set: Any) -> int:
        return eval_set.case_count


@admin.register(EvalCase)
class EvalCaseAdmin(_ReadOnly):
    list_display = ("eval_id", "eval_set", "first_message")
    list_filter = ("eval_set__app_name",)
    list_select_related = ("eval_set",)
    search_fields = ("eval_id", "eval_set__eval_set_id")
    fields = ("eval_set", "eval_id", "position", "case")
    readonly_fields = fields

    @admin.display(description="first user message")
    def first_message(self, case: EvalCase) -> str:
        return _first_user_text(case.document)

    @admin.display(description="case (ADK's JSON)")
    def case(self, case: EvalCase) -> str:
        return _pretty(case.document)


@admin.register(EvalSetResult)
class EvalSetResultAdmin(_ReadOnly):
    list_display = ("result_name", "app_name", "eval_set_id", "passed", "failed")
    list_filter = ("app_name", "eval_set_id")
    search_fields = ("result_name", "eval_set_id")
    fields = ("app_name", "eval_set_id", "result_name", "creation_timestamp", "scores", "result")
    readonly_fields = fields

    def _statuses(self, result: EvalSetResult) -> list[int]:
        return [case.get("finalEvalStatus") for case in json.loads(result.document).get("evalCaseResults") or []]

    @admin.display(description="passed")
    def passed(self, result: EvalSetResult) -> int:
        return self._statuses(result).count(1)

    @admin.display(description="failed")
    def failed(self, result: EvalSetResult) -> int:
        return self._statuses(result).count(2)

    @admin.display(description="scores")
    def scores(self, result: EvalSetResult) -> str:
        """One row per case and metric: the case, its status, the metric, its score against the threshold."""
        rows = [
            (
                case.get("evalId", ""),
                _STATUS.get(case.get("finalEvalStatus"), "?"),
                metric.get("metricName", ""),
                "—" if metric.get("score") is None else f"{metric['score']:.3g}",
                "—" if metric.get("threshold") is None else f"{metric['threshold']:.3g}",
            )
            for case in json.loads(result.document).get("evalCaseResults") or []
            for metric in case.get("overallEvalMetricResults") or [{}]
        ]
        body = format_html_join("", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", rows)
        return format_html(
            "<table><thead><tr><th>case</th><th>status</th><th>metric</th><th>score</th><th>threshold</th></tr>"
            "</thead><tbody>{}</tbody></table>",
            body,
        )

    @admin.display(description="result (ADK's JSON)")
    def result(self, result: EvalSetResult) -> str:
        return _pretty(result.document)

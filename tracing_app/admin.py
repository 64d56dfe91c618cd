"""Admin for traces: runs listed by time, app, user, session, status and duration; a waterfall per run."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.contrib import admin
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import format_html

from cognizes.infra.replica import ListsFromReplica
from tracing_app import services
from tracing_app.models import Span, Trace


@dataclass(frozen=True)
class WaterfallRow:
    span: Span
    depth: int
    left: float
    """Start, in % of the trace's duration."""
    width: float
    attributes_json: str


def waterfall_rows(trace: Trace, spans: list[Span]) -> list[WaterfallRow]:
    """Spans in tree order (each parent followed by its children by start time), placed on the trace's time axis."""
    total = max((trace.end_time - trace.start_time).total_seconds(), 1e-9)
    children: dict[str, list[Span]] = {}
    ids = {span.span_id for span in spans}
    for span in spans:
        parent = span.parent_span_id if span.parent_span_id in ids else ""
        children.setdefault(parent, []).append(span)
    rows: list[WaterfallRow] = []

    def visit(parent: str, depth: int) -> None:
        for span in sorted(children.get(parent, []), key=lambda s: s.start_time):
            left = (span.start_time - trace.start_time).total_seconds() / total * 100
            width = max((span.end_time - span.start_time).total_seconds() / total * 100, 0.2)
            attributes = {"status": span.status, "duration_ms": round(span.duration_ms, 3), **span.attributes}
            if span.status_message:
                attributes["status_message"] = span.status_message
            rows.append(
                WaterfallRow(
                    span,
                    depth,
                    round(left, 3),
                    round(min(width, 100 - left), 3),
                    json.dumps(attributes, indent=2, ensure_ascii=False, sort_keys=True),
                )
            )
            visit(span.span_id, depth + 1)

    visit("", 0)
    return rows


@admin.register(Trace)
class TraceAdmin(ListsFromReplica):
    list_display = (
        "start_time",
        "name",
        "app_name",
        "user_id",
        "session_link",
        "status",
        "duration",
        "span_count",
        "tokens",
    )
    list_filter = ("status", "app_name", "start_time")
    search_fields = ("trace_id", "session_id", "user_id", "invocation_id")
    date_hierarchy = "start_time"
    ordering = ("-start_time",)
    fields = (
        "trace_id",
        "name",
        "app_name",
        "user_id",
        "session_link",
        "invocation_id",
        "start_time",
        "end_time",
        "duration",
        "status",
        "span_count",
        "input_tokens",
        "output_tokens",
        "service_name",
        "waterfall",
    )
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # traces come from the exporter

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="duration", ordering="duration_ms")
    def duration(self, trace: Trace) -> str:
        return f"{trace.duration_ms:,.1f} ms"

    @admin.display(description="tokens (in/out)")
    def tokens(self, trace: Trace) -> str:
        return f"{trace.input_tokens} / {trace.output_tokens}"

    @admin.display(description="session", ordering="session_id")
    def session_link(self, trace: Trace) -> str:
        if not trace.session_id:
            return "—"
        query = urlencode({"app_name": trace.app_name, "user_id": trace.user_id, "session_id": trace.session_id})
        return format_html(
            '<a href="{}?{}">{}</a>', reverse("admin:sessions_app_session_changelist"), query, trace.session_id
        )

    @admin.display(description="waterfall")
    def waterfall(self, trace: Trace) -> str:
        rows = waterfall_rows(trace, services.get_spans(trace))
        return render_to_string("tracing_app/waterfall.html", {"trace": trace, "rows": rows})

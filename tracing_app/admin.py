"""Admin for traces: agent runs listed first, each with its agent, the user's words, its tools and duration; a
waterfall per run. Traces of protocol plumbing alone (MCP, A2A, HTTP) are one filter away."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import format_html
from django.utils.text import Truncator

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


class RunKindFilter(admin.SimpleListFilter):
    """Agent runs unless asked otherwise: plumbing traces (an MCP tools/list, an A2A card fetch) outnumber them."""

    title = "kind"
    parameter_name = "kind"
    AGENT_RUNS, PLUMBING, ALL = "agent", "other", "all"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(self.PLUMBING, "Protocol and other traces (MCP, A2A, HTTP)"), (self.ALL, "All")]

    def choices(self, changelist: Any) -> Any:
        """'Agent runs' is the list as first opened (no parameter), so it is the choice shown selected then."""
        yield {
            "selected": self.value() is None,
            "query_string": changelist.get_query_string(remove=[self.parameter_name]),
            "display": "Agent runs",
        }
        for value, title in self.lookup_choices:
            yield {
                "selected": self.value() == value,
                "query_string": changelist.get_query_string({self.parameter_name: value}),
                "display": title,
            }

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == self.ALL:
            return queryset
        if self.value() == self.PLUMBING:
            return queryset.filter(agent_name="")
        return queryset.exclude(agent_name="")


@admin.register(Trace)
class TraceAdmin(ListsFromReplica):
    list_display = (
        "start_time",
        "agent",
        "user_message",
        "tools",
        "duration",
        "status",
        "owner",
        "tokens",
    )
    list_filter = (RunKindFilter, "status", "app_name", "start_time")
    search_fields = ("trace_id", "session_id", "user_id", "invocation_id", "agent_name")
    date_hierarchy = "start_time"
    ordering = ("-start_time",)
    fields = (
        "trace_id",
        "name",
        "agent_name",
        "user_message",
        "tools",
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

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        """The user's words come from the session's events: only to a person who may read those."""
        traces = super().get_queryset(request)
        if request.user.has_perm("sessions_app.view_event"):
            traces = services.with_user_messages(traces)
        return traces

    @admin.display(description="agent", ordering="agent_name")
    def agent(self, trace: Trace) -> str:
        """The agent that ran; for plumbing, the root span's name, greyed."""
        if trace.agent_name:
            return format_html("<strong>{}</strong>", trace.agent_name)
        return format_html('<span class="quiet">{}</span>', trace.name or "—")

    @admin.display(description="user's message")
    def user_message(self, trace: Trace) -> str:
        """What the user asked for this run (a line of it, the whole in the tooltip); blank without the right."""
        text = getattr(trace, "user_message", None) or ""
        if not text:
            return "—"
        return format_html('<span title="{}">{}</span>', text, Truncator(text).chars(80))

    @admin.display(description="tool calls")
    def tools(self, trace: Trace) -> str:
        """The tools called, in first-call order, each with how often: 'get_weather ×2, remember_city'."""
        counts = Counter(str(name) for name in trace.tool_calls or [])
        return ", ".join(name if n == 1 else f"{name} ×{n}" for name, n in counts.items()) or "—"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # traces come from the exporter

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="duration", ordering="duration_ms")
    def duration(self, trace: Trace) -> str:
        return f"{trace.duration_ms:,.1f} ms"

    @admin.display(description="tokens")
    def tokens(self, trace: Trace) -> str:
        """Model tokens in / out; the header says only "tokens" to keep the list within a 1400 px screen."""
        return format_html('<span title="in / out">{} / {}</span>', trace.input_tokens, trace.output_tokens)

    @admin.display(description="session", ordering="session_id")
    def session_link(self, trace: Trace) -> str:
        if not trace.session_id:
            return "—"
        query = urlencode({"app_name": trace.app_name, "user_id": trace.user_id, "session_id": trace.session_id})
        return format_html(
            '<a href="{}?{}">{}</a>', reverse("admin:sessions_app_session_changelist"), query, trace.session_id
        )

    @admin.display(description="app / user / session", ordering="app_name")
    def owner(self, trace: Trace) -> str:
        """Whose run, in one column: three of their own made the list wider than a 1400 px screen."""
        return format_html("{} / {} / {}", trace.app_name or "—", trace.user_id or "—", self.session_link(trace))

    @admin.display(description="waterfall")
    def waterfall(self, trace: Trace) -> str:
        rows = waterfall_rows(trace, services.get_spans(trace))
        return render_to_string("tracing_app/waterfall.html", {"trace": trace, "rows": rows})

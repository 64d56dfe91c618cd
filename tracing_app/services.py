"""Storing and reading traces: the one place the tracing rules live.

The exporter, the admin, the API and the retention task all come through here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import OuterRef, QuerySet, Subquery
from django.utils import timezone

from cognizes.infra.replica import stale_ok
from sessions_app import services as session_services
from sessions_app.models import Event
from tracing_app.models import Span, Status, Trace

CONVERSATION_ID = "gen_ai.conversation.id"
INVOCATION_ID = "gcp.vertex.agent.invocation_id"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
OPERATION = "gen_ai.operation.name"
AGENT_NAME = "gen_ai.agent.name"
TOOL_NAME = "gen_ai.tool.name"


@dataclasses.dataclass(frozen=True)
class SpanRecord:
    """One finished span, as plain data (the exporter converts OpenTelemetry's ReadableSpan)."""

    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    kind: str
    start_time: datetime
    end_time: datetime
    status: str
    status_message: str
    attributes: dict[str, Any]
    events: list[dict[str, Any]]
    service_name: str = ""


# Totals are recomputed from all stored spans of the touched traces, not added up
# batch by batch: a trace's spans arrive in several batches (children end first),
# and a retried batch must not count twice.
_REFRESH_TRACES = """
UPDATE traces AS t SET
    name = agg.name,
    session_id = CASE WHEN t.session_id = '' THEN agg.session_id ELSE t.session_id END,
    invocation_id = agg.invocation_id,
    start_time = agg.start_time,
    end_time = agg.end_time,
    duration_ms = EXTRACT(EPOCH FROM agg.end_time - agg.start_time) * 1000,
    status = agg.status,
    span_count = agg.span_count,
    input_tokens = agg.input_tokens,
    output_tokens = agg.output_tokens,
    agent_name = agg.agent_name,
    tool_calls = agg.tool_calls
FROM (
    SELECT
        s.trace_id,
        COALESCE(
            (array_agg(s.name ORDER BY s.start_time) FILTER (WHERE s.parent_span_id = ''))[1],
            (array_agg(s.name ORDER BY s.start_time))[1]
        ) AS name,
        COALESCE(max(s.attributes ->> %(conversation)s), '') AS session_id,
        COALESCE(max(s.attributes ->> %(invocation)s), '') AS invocation_id,
        min(s.start_time) AS start_time,
        max(s.end_time) AS end_time,
        -- A run whose spans all ended without an error is 'ok' (OpenTelemetry leaves most spans UNSET).
        CASE WHEN bool_or(s.status = 'error') THEN 'error' ELSE 'ok' END AS status,
        count(*) AS span_count,
        COALESCE(sum(CASE WHEN s.attributes ->> %(input)s ~ '^[0-9]+$'
                          THEN (s.attributes ->> %(input)s)::bigint END), 0) AS input_tokens,
        COALESCE(sum(CASE WHEN s.attributes ->> %(output)s ~ '^[0-9]+$'
                          THEN (s.attributes ->> %(output)s)::bigint END), 0) AS output_tokens,
        -- The outermost agent: ADK's invoke_agent spans (an A2A or MCP request may wrap the run).
        left(COALESCE(
            (array_agg(s.attributes ->> %(agent)s ORDER BY s.start_time)
                FILTER (WHERE s.attributes ->> %(operation)s = 'invoke_agent' AND s.attributes ? %(agent)s))[1],
            ''
        ), 255) AS agent_name,
        -- ADK's execute_tool spans only: an MCP server's tools/call span of the same call says execute_tool
        -- too, and ADK's span of parallel calls merged into one names no tool ('(merged tools)').
        COALESCE(
            jsonb_agg(s.attributes -> %(tool)s ORDER BY s.start_time)
                FILTER (WHERE starts_with(s.name, 'execute_tool ') AND s.attributes ? %(tool)s
                        AND s.attributes ->> %(tool)s <> '(merged tools)'),
            '[]'::jsonb
        ) AS tool_calls
    FROM spans AS s
    WHERE s.trace_id = ANY(%(trace_ids)s)
    GROUP BY s.trace_id
) AS agg
WHERE t.trace_id = agg.trace_id
"""


def _refresh_traces(trace_ids: list[str]) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            _REFRESH_TRACES,
            {
                "trace_ids": trace_ids,
                "conversation": CONVERSATION_ID,
                "invocation": INVOCATION_ID,
                "input": INPUT_TOKENS,
                "output": OUTPUT_TOKENS,
                "operation": OPERATION,
                "agent": AGENT_NAME,
                "tool": TOOL_NAME,
            },
        )


def do_record_spans(records: Iterable[SpanRecord]) -> int:
    """Store a batch of finished spans and refresh their traces' totals; return the spans stored.

    Idempotent: a span already stored (a retried batch) is skipped.
    """
    records = list(records)
    if not records:
        return 0
    first: dict[str, SpanRecord] = {}
    for record in records:
        first.setdefault(record.trace_id, record)
    with transaction.atomic():
        Trace.objects.bulk_create(
            [
                Trace(
                    trace_id=trace_id, start_time=r.start_time, end_time=r.end_time, service_name=r.service_name[:128]
                )
                for trace_id, r in first.items()
            ],
            ignore_conflicts=True,
        )
        created = Span.objects.bulk_create(
            [
                Span(
                    trace_id=r.trace_id,
                    span_id=r.span_id,
                    parent_span_id=r.parent_span_id,
                    name=r.name[:255],
                    kind=r.kind,
                    start_time=r.start_time,
                    end_time=r.end_time,
                    duration_ms=(r.end_time - r.start_time).total_seconds() * 1000,
                    status=r.status,
                    status_message=r.status_message,
                    attributes=r.attributes,
                    events=r.events,
                )
                for r in records
            ],
            ignore_conflicts=True,
        )
        _refresh_traces(list(first))
        _fill_owners(list(first))
    return len(created)


def _fill_owners(trace_ids: list[str]) -> None:
    """Give traces the app and user of their session, which ADK's spans do not carry.

    A session id is unique only within an app and user; a trace whose id matches
    sessions of several owners keeps no owner rather than a guessed one.
    """
    for trace in Trace.objects.filter(trace_id__in=trace_ids, app_name="").exclude(session_id=""):
        owners = session_services.get_session_owners(trace.session_id)
        if len(owners) == 1:
            trace.app_name, trace.user_id = owners[0]
            trace.save(update_fields=["app_name", "user_id"])


def get_session_traces(*, app_name: str, user_id: str, session_id: str) -> Any:
    """The traces of one session, newest first (a QuerySet, for pagination), from the replica if there is one."""
    traces = Trace.objects.using(stale_ok())
    return traces.of_session(app_name=app_name, user_id=user_id, session_id=session_id).order_by("-start_time")


def with_user_messages(traces: QuerySet[Trace]) -> QuerySet[Trace]:
    """Each trace with ``user_message``: the preview of the event in which its user asked for the run.

    ADK's spans do not carry what the user said; the session's events do, under the run's invocation id.
    One correlated subquery (the list stays a single query, however long the page), matched on the trace's own
    app, user and session, since a session id is unique only within its owner. Empty when the session is not
    stored here (an in-memory or remote session service) or is gone.
    """
    asked = (
        Event.objects.filter(
            session__app_name=OuterRef("app_name"),
            session__user_id=OuterRef("user_id"),
            session__session_id=OuterRef("session_id"),
            invocation_id=OuterRef("invocation_id"),
            author="user",
        )
        .exclude(invocation_id="")
        .order_by("version")
        .values("preview")[:1]
    )
    return traces.annotate(user_message=Subquery(asked))


def get_trace(*, trace_id: str, app_name: str, user_id: str) -> Trace | None:
    """A trace of this owner, or None (another owner's trace is not found either); from the replica if there is one."""
    return Trace.objects.using(stale_ok()).filter(trace_id=trace_id, app_name=app_name, user_id=user_id).first()


def get_spans(trace: Trace) -> list[Span]:
    """The trace's spans in start order, the order a waterfall draws them; from the replica if there is one."""
    return list(Span.objects.using(stale_ok()).filter(trace_id=trace.pk).order_by("start_time", "id"))


def do_delete_old_traces(*, older_than: timedelta) -> int:
    """Delete traces that started more than ``older_than`` ago, with their spans; return how many traces."""
    cutoff = timezone.now() - older_than
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM spans WHERE trace_id IN (SELECT trace_id FROM traces WHERE start_time < %s)", [cutoff]
        )
        cursor.execute("DELETE FROM traces WHERE start_time < %s", [cutoff])
        return cursor.rowcount


def status_of(code_name: str) -> str:
    """Our status for an OpenTelemetry StatusCode name ('UNSET', 'OK', 'ERROR')."""
    return {"OK": Status.OK, "ERROR": Status.ERROR}.get(code_name, Status.UNSET).value

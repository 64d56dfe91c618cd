"""An OpenTelemetry ``SpanExporter`` that stores finished spans in PostgreSQL.

It runs on a ``BatchSpanProcessor``'s worker thread, so agent latency never waits
for the database. That thread has its own Django connection. A failed export is
logged and counted and its spans are dropped: tracing must never break the agent
(issue 6).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from django.db import close_old_connections, connection
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from tracing_app import services

logger = logging.getLogger(__name__)


class PostgresSpanExporter(SpanExporter):
    """Writes each batch of spans with ``services.do_record_spans``; never raises."""

    def __init__(self) -> None:
        self.failures = 0
        """Batches that could not be stored (their spans are lost)."""
        self.lost_spans = 0
        self.exported_spans = 0
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            records = [to_record(span) for span in spans]
            close_old_connections()  # a long-lived thread: drop a connection the server closed
            stored = services.do_record_spans(records)
        except Exception:
            with self._lock:
                self.failures += 1
                self.lost_spans += len(spans)
            logger.exception("tracing: could not store %d spans (%d failed batches so far)", len(spans), self.failures)
            connection.close()  # reconnect on the next batch rather than reuse a broken connection
            return SpanExportResult.FAILURE
        with self._lock:
            self.exported_spans += stored
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        connection.close()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def to_record(span: ReadableSpan) -> services.SpanRecord:
    """Plain data from an OpenTelemetry span: hex ids, aware datetimes, JSON-safe attributes."""
    context = span.get_span_context()
    assert context is not None  # an ended span has its context
    return services.SpanRecord(
        trace_id=format(context.trace_id, "032x"),
        span_id=format(context.span_id, "016x"),
        parent_span_id=format(span.parent.span_id, "016x") if span.parent else "",
        name=span.name,
        kind=span.kind.name,
        start_time=_time(span.start_time),
        end_time=_time(span.end_time or span.start_time),
        status=services.status_of(span.status.status_code.name),
        status_message=span.status.description or "",
        attributes=_json_safe(span.attributes),
        events=[
            {"name": event.name, "time": _time(event.timestamp).isoformat(), "attributes": _json_safe(event.attributes)}
            for event in span.events
        ],
        service_name=str(span.resource.attributes.get("service.name", "")) if span.resource else "",
    )


def _time(nanoseconds: int | None) -> datetime:
    return datetime.fromtimestamp((nanoseconds or 0) / 1e9, tz=UTC)


def _json_safe(attributes: Any) -> dict[str, Any]:
    """OTel attribute values are scalars or tuples of them; JSON wants lists, and PostgreSQL no NUL."""
    if not attributes:
        return {}
    text = json.dumps(
        {key: list(value) if isinstance(value, tuple) else value for key, value in attributes.items()},
        default=str,
        ensure_ascii=False,
    )
    return json.loads(text.replace("\\u0000", ""))

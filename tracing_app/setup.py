"""Install the OpenTelemetry pipeline that ADK's spans go through: PostgreSQL, OTLP, or both.

ADK gets its tracer from the global tracer provider (``trace.get_tracer`` in
``google.adk.telemetry.tracing``), so setting that provider once per process is
all it takes. OTLP export is switched on by the standard
``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` variables
(headers, protocol etc. are read by the OTLP exporter itself).
"""

from __future__ import annotations

import logging
import os
import threading

from django.conf import settings
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter

from tracing_app.exporter import PostgresSpanExporter

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_provider: TracerProvider | None = None
_database_exporter: PostgresSpanExporter | None = None


def configure_tracing() -> TracerProvider:
    """Send this process's spans to the configured places; calling it again changes nothing.

    If the process already has an SDK tracer provider (set by the host program),
    our processors are added to it instead of replacing it.
    """
    global _provider, _database_exporter
    with _lock:
        if _provider is not None:
            return _provider
        current = trace.get_tracer_provider()
        if isinstance(current, TracerProvider):
            provider = current
        else:
            provider = TracerProvider(resource=Resource.create({"service.name": _service_name()}))
            trace.set_tracer_provider(provider)
        if settings.COGNIZES_TRACING_DATABASE:
            _database_exporter = PostgresSpanExporter()
            provider.add_span_processor(BatchSpanProcessor(_database_exporter))
        otlp = _otlp_exporter()
        if otlp is not None:
            provider.add_span_processor(BatchSpanProcessor(otlp))
        _provider = provider
        return provider


def database_exporter() -> PostgresSpanExporter | None:
    """The PostgreSQL exporter installed by ``configure_tracing``, for its failure counts."""
    return _database_exporter


def _service_name() -> str:
    return os.environ.get("OTEL_SERVICE_NAME", "cognizes")


def _otlp_exporter() -> SpanExporter | None:
    if not (os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")):
        return None
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError:
        logger.error("tracing: OTEL_EXPORTER_OTLP_* is set but opentelemetry-exporter-otlp-proto-http is not installed")
        return None
    return OTLPSpanExporter()

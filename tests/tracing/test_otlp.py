"""With OTEL_EXPORTER_OTLP_ENDPOINT set, the same spans also go to an OTLP/HTTP collector (e.g. Langfuse)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tracing_app import setup


def test_spans_are_posted_to_the_collector_named_by_the_standard_variable(monkeypatch):
    received: list[tuple[str, bytes]] = []

    class Collector(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            received.append((self.path, self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{server.server_port}")
    try:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(setup._otlp_exporter()))
        with provider.get_tracer("test").start_as_current_span("invoke_agent weather_agent"):
            pass
    finally:
        server.shutdown()

    ((path, body),) = received
    assert path == "/v1/traces"
    assert b"invoke_agent weather_agent" in body


def test_without_the_variable_there_is_no_otlp_export(monkeypatch):
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)

    assert setup._otlp_exporter() is None

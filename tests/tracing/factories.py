"""Stored traces built directly through the service, for tests that need no agent run."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tracing_app import services

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def record_trace(
    trace_id: str = "a" * 32,
    *,
    session_id: str = "s1",
    start: datetime = T0,
    failing_tool: bool = False,
    invocation_id: str = "e-1",
    inside: str = "",
) -> str:
    """A run of 100 ms: invoke_agent → generate_content (30 ms, 10/5 tokens) → execute_tool (20 ms).

    ``inside``: the name of a protocol span the run is nested in, as a2a-sdk's request handler wraps a run.
    """

    def span(span_id: str, parent: str, name: str, begin_ms: int, end_ms: int, **attributes) -> services.SpanRecord:
        error = failing_tool and name.startswith("execute_tool")
        return services.SpanRecord(
            trace_id=trace_id,
            span_id=span_id,
            parent_span_id=parent,
            name=name,
            kind="INTERNAL",
            start_time=start + timedelta(milliseconds=begin_ms),
            end_time=start + timedelta(milliseconds=end_ms),
            status="error" if error else "unset",
            status_message="RuntimeError: boom" if error else "",
            attributes={"gen_ai.conversation.id": session_id, **attributes},
            events=[],
        )

    root = "0" * 15 + "1" if inside else ""
    spans = [
        span(
            "1" * 16,
            root,
            "invoke_agent weather_agent",
            0,
            100,
            **{"gen_ai.agent.name": "weather_agent", "gen_ai.operation.name": "invoke_agent"},
        ),
        span(
            "2" * 16,
            "1" * 16,
            "generate_content scripted-offline",
            5,
            35,
            **{
                "gen_ai.usage.input_tokens": 10,
                "gen_ai.usage.output_tokens": 5,
                "gcp.vertex.agent.invocation_id": invocation_id,
            },
        ),
        span(
            "3" * 16,
            "1" * 16,
            "execute_tool remember_city",
            40,
            60,
            **{"gen_ai.tool.name": "remember_city", "gen_ai.operation.name": "execute_tool"},
        ),
    ]
    if inside:
        spans.append(span(root, "", inside, 0, 100))
    services.do_record_spans(spans)
    return trace_id


def record_protocol_trace(trace_id: str, name: str, *, start: datetime = T0, **attributes) -> str:
    """A trace of plumbing alone (an MCP request, an HTTP call): one span of 5 ms, no agent in it."""
    services.do_record_spans(
        [
            services.SpanRecord(
                trace_id=trace_id,
                span_id="9" * 16,
                parent_span_id="",
                name=name,
                kind="SERVER",
                start_time=start,
                end_time=start + timedelta(milliseconds=5),
                status="unset",
                status_message="",
                attributes=attributes,
                events=[],
            )
        ]
    )
    return trace_id

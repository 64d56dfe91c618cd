"""Stored traces built directly through the service, for tests that need no agent run."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tracing_app import services

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def record_trace(
    trace_id: str = "a" * 32, *, session_id: str = "s1", start: datetime = T0, failing_tool: bool = False
) -> str:
    """A run of 100 ms: invoke_agent → generate_content (30 ms, 10/5 tokens) → execute_tool (20 ms)."""

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

    services.do_record_spans(
        [
            span("1" * 16, "", "invoke_agent weather_agent", 0, 100, **{"gen_ai.agent.name": "weather_agent"}),
            span(
                "2" * 16,
                "1" * 16,
                "generate_content scripted-offline",
                5,
                35,
                **{"gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 5},
            ),
            span("3" * 16, "1" * 16, "execute_tool remember_city", 40, 60, **{"gen_ai.tool.name": "remember_city"}),
        ]
    )
    return trace_id

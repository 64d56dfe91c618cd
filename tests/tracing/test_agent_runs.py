"""An ADK run becomes one trace in PostgreSQL, with its spans, parents and gen_ai attributes."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.db import connection

from cognizes.adk import PostgresSessionService
from tests.tracing.helpers import APP, ask, flush, make_runner
from tracing_app.models import Span, Trace
from tracing_app.setup import database_exporter

pytestmark = pytest.mark.django_db(transaction=True)


async def stored_trace(session_id: str) -> tuple[Trace, dict[str, Span]]:
    await flush()
    return await _stored_trace(session_id)


@sync_to_async
def _stored_trace(session_id: str) -> tuple[Trace, dict[str, Span]]:
    (trace,) = Trace.objects.filter(session_id=session_id)
    return trace, {span.span_id: span for span in trace.spans.all()}


async def test_a_run_with_a_tool_is_one_trace_of_nested_spans():
    service = PostgresSessionService()
    session = await service.create_session(app_name=APP, user_id="ada")

    await ask(make_runner(service), user_id="ada", session_id=session.id, text="Paris")
    trace, spans = await stored_trace(session.id)

    assert (trace.app_name, trace.user_id, trace.status) == (APP, "ada", "ok")
    assert trace.name == "invoke_workflow weather_agent"
    assert (trace.agent_name, trace.tool_calls) == ("weather_agent", ["remember_city"])  # for the list (issue 43)
    assert trace.span_count == len(spans) == 5
    assert (trace.input_tokens, trace.output_tokens) == (20, 10)  # two model calls
    assert trace.invocation_id.startswith("e-")
    assert trace.duration_ms > 0 and trace.end_time >= trace.start_time

    root = next(s for s in spans.values() if not s.parent_span_id)
    (agent,) = [s for s in spans.values() if s.parent_span_id == root.span_id]
    children = sorted((s for s in spans.values() if s.parent_span_id == agent.span_id), key=lambda s: s.start_time)
    assert agent.name == "invoke_agent weather_agent"
    assert [s.name for s in children] == [
        "generate_content scripted-offline",
        "execute_tool remember_city",
        "generate_content scripted-offline",
    ]
    model_call, tool_call, _ = children
    assert agent.attributes["gen_ai.agent.name"] == "weather_agent"
    assert agent.attributes["gen_ai.conversation.id"] == session.id
    assert model_call.attributes["gen_ai.usage.input_tokens"] == 10
    assert model_call.attributes["gen_ai.usage.output_tokens"] == 5
    assert tool_call.attributes["gen_ai.tool.name"] == "remember_city"
    assert all(s.start_time >= root.start_time and s.end_time <= root.end_time for s in spans.values())


async def test_a_failing_tool_marks_its_span_and_the_trace_as_errors():
    service = PostgresSessionService()
    session = await service.create_session(app_name=APP, user_id="ada")

    with pytest.raises(RuntimeError, match="no such city"):
        await ask(make_runner(service), user_id="ada", session_id=session.id, text="Atlantis")
    trace, spans = await stored_trace(session.id)

    assert trace.status == "error"
    (tool_call,) = [s for s in spans.values() if s.name == "execute_tool remember_city"]
    assert tool_call.status == "error"
    assert tool_call.status_message == "RuntimeError: no such city"
    assert tool_call.attributes["error.type"] == "RuntimeError"
    assert tool_call.events[0]["name"] == "exception"
    assert tool_call.events[0]["attributes"]["exception.message"] == "no such city"


@sync_to_async
def _database_outage(on: bool) -> None:
    """Refuse new connections to the test database and cut the exporter's: a real outage for it.

    Only the test's own connection survives (it is not the exporter thread's).
    """
    import psycopg

    connection.ensure_connection()
    params = {**connection.get_connection_params(), "dbname": "postgres", "autocommit": True}
    params.pop("cursor_factory", None)
    name = connection.settings_dict["NAME"]
    with psycopg.connect(**params) as admin:
        admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS {str(not on).upper()}')
        if on:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> %s",
                [name, connection.connection.info.backend_pid],
            )


async def test_a_database_outage_during_export_loses_the_spans_but_not_the_run():
    from google.adk.sessions import InMemorySessionService

    service = InMemorySessionService()  # the run itself needs no database
    session = await service.create_session(app_name=APP, user_id="ada")
    exporter = database_exporter()
    failures_before = exporter.failures

    await _database_outage(True)
    try:
        events = await ask(make_runner(service), user_id="ada", session_id=session.id, text="Paris")
        await flush()
    finally:
        await _database_outage(False)

    assert events[-1].content.parts[0].text == "Done: {'city': 'Paris'}"
    assert exporter.failures > failures_before
    assert not await Trace.objects.filter(session_id=session.id).aexists()

    await ask(make_runner(service), user_id="ada", session_id=session.id, text="Oslo")  # the exporter recovers
    await flush()
    assert await Trace.objects.filter(session_id=session.id).acount() == 1

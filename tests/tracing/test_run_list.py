"""The trace list leads with agent runs (issue 43, item 5): MCP, A2A and HTTP plumbing traces outnumbered them.

Each row says which agent ran, what the user asked, the tools it called and how long it took, without opening the
trace; a filter shows the other traces. The user's words are tenant data: shown only to who may read the session's
events, and escaped. The page costs the same few queries for 2 rows as for 20.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import connections
from django.test import Client
from django.test.utils import CaptureQueriesContext
from google.adk.events import Event
from google.genai import types

from cognizes.adk import PostgresSessionService
from cognizes.infra.replica import stale_ok
from tests.tracing.factories import T0, record_protocol_trace, record_trace
from tests.tracing.helpers import APP, ask, flush, make_runner
from tracing_app.models import Trace

pytestmark = pytest.mark.django_db(transaction=True)

HOSTILE = '東京の天気は？ Привет, ¿qué tal? <script>alert("x")</script><img src=x onerror=alert(1)>'


def _ask(session_id: str, text: str, *, invocation_id: str, app_name: str = "shop", user_id: str = "ada") -> None:
    """The user's message of an invocation, stored as ADK stores it (through the session service)."""
    service = PostgresSessionService()

    async def write() -> None:
        session = await service.get_session(app_name=app_name, user_id=user_id, session_id=session_id)
        if session is None:
            session = await service.create_session(app_name=app_name, user_id=user_id, session_id=session_id)
        message = types.Content(role="user", parts=[types.Part(text=text)])
        await service.append_event(session, Event(author="user", invocation_id=invocation_id, content=message))

    async_to_sync(write)()


def _noise(count: int) -> None:
    """Plumbing traces, newer than the runs: what a page of the list showed first before."""
    for n in range(count):
        name, attributes = [
            ("tools/list", {"mcp.method.name": "tools/list"}),
            ("MCP send initialize", {"mcp.method.name": "initialize"}),
            ("POST /a2a/weather", {"http.request.method": "POST"}),
        ][n % 3]
        record_protocol_trace(f"{n:032x}", name, start=T0 + timedelta(minutes=10 + n), **attributes)


def _rows(page: str) -> list[str]:
    body = page[page.index('id="result_list"') :]
    body = body[body.index("<tbody>") : body.index("</tbody>")]
    return re.findall(r"<tr.*?</tr>", body, re.S)


def _cell(row: str, field: str) -> str:
    match = re.search(rf'class="field-{field}[^"]*">(.*?)</t[dh]>', row, re.S)
    assert match, f"no {field} column in {row}"
    return match.group(1)


def _staff(*codenames: str) -> Client:
    user = get_user_model().objects.create_user("viewer-" + "-".join(codenames), is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def staff(admin_user) -> Client:
    client = Client()
    client.force_login(admin_user)
    return client


def test_agent_runs_come_first_with_agent_message_tools_and_duration(staff):
    _ask("s1", HOSTILE, invocation_id="e-1")
    run = record_trace("a" * 32, session_id="s1", invocation_id="e-1")
    wrapped = record_trace(
        "b" * 32,
        session_id="s1",
        invocation_id="e-2",
        start=T0 + timedelta(minutes=1),
        inside="a2a.server.request_handlers.default_request_handler.DefaultRequestHandler.on_message_send",
    )
    _ask("s1", "Und in Zürich?", invocation_id="e-2")
    _noise(6)

    page = staff.get("/admin/tracing_app/trace/").content.decode()

    rows = _rows(page)
    assert [re.search(r"/trace/(\w+)/change/", row).group(1) for row in rows] == [wrapped, run]  # no plumbing
    first, second = rows
    assert "weather_agent" in _cell(first, "agent") and "weather_agent" in _cell(second, "agent")
    assert "Und in Zürich?" in _cell(first, "user_message")
    message = _cell(second, "user_message")
    assert "東京の天気は？ Привет, ¿qué tal?" in message
    assert "&lt;script&gt;" in message and "<script>" not in page.split("</head>")[1]
    assert "<img" not in message
    assert _cell(second, "tools") == "remember_city"
    assert "100.0 ms" in _cell(second, "duration")
    assert re.search(r'<li class="selected">\s*<a href="\?"[^>]*>Agent runs</a>', page)

    detail = staff.get(f"/admin/tracing_app/trace/{run}/change/").content.decode()
    assert "東京の天気は？" in detail and "&lt;script&gt;" in detail and "remember_city" in detail

    others = _rows(staff.get("/admin/tracing_app/trace/?kind=other").content.decode())
    assert len(others) == 6 and not any("weather_agent" in row for row in others)
    assert any("tools/list" in row for row in others)
    assert len(_rows(staff.get("/admin/tracing_app/trace/?kind=all").content.decode())) == 8


def test_a_real_adk_run_shows_its_agent_the_users_words_and_its_tool(staff):
    service = PostgresSessionService()

    async def run() -> None:
        session = await service.create_session(app_name=APP, user_id="ada", session_id="real")
        await ask(make_runner(service), user_id="ada", session_id=session.id, text="Paris")
        await flush()

    async_to_sync(run)()
    (row,) = _rows(staff.get("/admin/tracing_app/trace/").content.decode())

    assert "weather_agent" in _cell(row, "agent")
    assert "Paris" in _cell(row, "user_message")
    assert _cell(row, "tools") == "remember_city"


def test_the_users_words_need_the_permission_to_read_events():
    _ask("s1", "Wie wird das Wetter in Köln?", invocation_id="e-1")
    record_trace("a" * 32, session_id="s1", invocation_id="e-1")

    traces_only = _staff("view_trace").get("/admin/tracing_app/trace/").content.decode()
    with_events = _staff("view_trace", "view_event").get("/admin/tracing_app/trace/").content.decode()

    assert "weather_agent" in traces_only and "remember_city" in traces_only
    assert "Köln" not in traces_only
    assert "Köln" in with_events


def test_another_owners_session_with_the_same_ids_lends_no_message(staff):
    """Session ids are unique per app and user only: the message comes from the trace's own session."""
    _ask("s1", "Mallory asks", invocation_id="e-1", app_name="other", user_id="mallory")
    _ask("s1", "Ada asks", invocation_id="e-1")
    Trace.objects.all().delete()
    record_trace("a" * 32, session_id="s1", invocation_id="e-1")
    Trace.objects.filter(pk="a" * 32).update(app_name="shop", user_id="ada")

    (row,) = _rows(staff.get("/admin/tracing_app/trace/").content.decode())

    assert "Ada asks" in _cell(row, "user_message") and "Mallory" not in row


def test_a_page_of_twenty_runs_costs_the_queries_of_a_page_of_two(staff):
    def queries(runs: int) -> int:
        Trace.objects.all().delete()
        for n in range(runs):
            _ask(f"s{n}", f"question {n}", invocation_id=f"e-{n}")
            record_trace(f"{n:032x}", session_id=f"s{n}", invocation_id=f"e-{n}", start=T0 + timedelta(minutes=n))
        with CaptureQueriesContext(connections[stale_ok()]) as captured:
            page = staff.get("/admin/tracing_app/trace/").content.decode()
        assert len(_rows(page)) == runs and f"question {runs - 1}" in page
        return len(captured)

    assert queries(2) == queries(20)


def test_traces_stored_before_are_filled_by_the_migration():
    """Migration 0004 gives the traces already stored their agent and tools, by the exporter's rule."""
    import importlib

    from django.db import connection

    migration = importlib.import_module("tracing_app.migrations.0004_trace_agent_runs")
    run = record_trace("a" * 32, inside="a2a.on_message_send")
    plumbing = record_protocol_trace("b" * 32, "tools/call remember_city", **{"gen_ai.operation.name": "execute_tool"})
    Trace.objects.update(agent_name="", tool_calls=[])  # as the columns were added

    with connection.cursor() as cursor:
        cursor.execute(migration.BACKFILL)

    filled = {trace.pk: (trace.agent_name, trace.tool_calls) for trace in Trace.objects.all()}
    assert filled == {run: ("weather_agent", ["remember_city"]), plumbing: ("", [])}

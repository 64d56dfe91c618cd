"""The admin lists traces and draws each as a waterfall, linked to and from its session."""

from __future__ import annotations

import time

import pytest
from django.test import Client

from sessions_app import services as sessions
from sessions_app.models import Session
from tests.tracing.factories import record_trace

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(admin_user) -> Client:
    client = Client()
    client.force_login(admin_user)
    return client


def test_the_trace_list_shows_app_user_session_status_and_duration(staff):
    record_trace(session_id="s1", failing_tool=True)

    page = staff.get("/admin/tracing_app/trace/").content.decode()

    assert "invoke_agent weather_agent" in page
    assert "100.0 ms" in page
    assert "error" in page
    assert "s1" in page


def test_the_trace_page_draws_every_span_nested_under_its_parent(staff):
    trace_id = record_trace(session_id="s1")

    page = staff.get(f"/admin/tracing_app/trace/{trace_id}/change/").content.decode()

    assert page.count('class="cz-span"') == 3
    assert 'data-depth="1"' in page and "execute_tool remember_city" in page
    assert "left: 40.0%; width: 20.0%" in page  # the tool ran from 40 to 60 ms of a 100 ms run
    assert "&quot;gen_ai.tool.name&quot;: &quot;remember_city&quot;" in page


def test_session_and_trace_pages_link_to_each_other(staff):
    sessions.do_create_session(
        app_name="shop", user_id="ada", session_id="s1", delta=sessions.StateDelta(), now=time.time()
    )
    trace_id = record_trace(session_id="s1")
    session = Session.objects.get(session_id="s1")

    session_page = staff.get(f"/admin/sessions_app/session/{session.pk}/change/").content.decode()
    traces_url = "/admin/tracing_app/trace/?app_name=shop&amp;user_id=ada&amp;session_id=s1"
    assert traces_url in session_page
    traces_page = staff.get(traces_url.replace("&amp;", "&")).content.decode()
    assert trace_id in traces_page

    trace_page = staff.get(f"/admin/tracing_app/trace/{trace_id}/change/").content.decode()
    assert "/admin/sessions_app/session/?app_name=shop&amp;user_id=ada&amp;session_id=s1" in trace_page

"""``load_demo`` (run by ``make run``): a fresh install shows a real conversation with the weather agent."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from memory_app.models import Memory
from runtime_app.agents import forget_runners
from sessions_app import services
from tools_app.models import Tool, ToolExecution

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_demo_holds_two_conversations_once():
    forget_runners()
    out = StringIO()
    call_command("load_demo", stdout=out)

    printed = out.getvalue()
    assert "offline scripted model" in printed
    assert "→ get_weather({'city': 'Paris', 'unit': 'fahrenheit'})" in printed
    assert "It's 64°F and clear in Paris." in printed
    stored = services.get_session(app_name="weather", user_id="alice", session_id="demo-2")
    assert stored.state["last_city"] == "Paris" and len(stored.events_json) == 6
    assert Memory.objects.filter(app_name="weather", user_id="alice", text__icontains="fahrenheit").exists()
    assert ToolExecution.objects.filter(session_id="demo-2", tool_name="get_weather").count() == 1

    again = StringIO()
    call_command("load_demo", stdout=again)
    assert "already loaded" in again.getvalue()
    assert Tool.objects.filter(app_name="weather").count() == 1
    forget_runners()

"""``load_demo`` (run by ``make run``): a fresh install shows real conversations with the weather agent."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from google.genai import types

from cognizes.adk import runner_for
from demo_agents.weather.agent import HANDBOOK_INSTRUCTION, root_agent
from demo_agents.weather.knowledge import FILES
from knowledge_app.models import Chunk, Corpus, Document
from memory_app.models import Memory
from runtime_app.agents import forget_runners, get_runner
from sessions_app import services
from tools_app.models import Tool, ToolExecution

pytestmark = pytest.mark.django_db(transaction=True)

PACKING_ADVICE = "closed shoes that keep out puddles, a scarf and a compact umbrella"  # cities.md, Paris in autumn


def test_the_demo_indexes_the_handbook_and_holds_three_conversations_once():
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
    # The shipped handbook, indexed by the command: active documents, chunks under their headings.
    [corpus] = Corpus.objects.filter(app_name="weather")
    documents = Document.objects.filter(corpus=corpus)
    assert sorted(documents.values_list("display_name", "status")) == [
        ("cities.md", "active"),
        ("forecast.md", "active"),
        ("packing.md", "active"),
    ]
    assert all(document.chunk_count > 0 for document in documents)
    paris_in_autumn = "City climate notes › Paris › Autumn (September to November)"
    assert Chunk.objects.filter(corpus=corpus, heading=paris_in_autumn, text__contains=PACKING_ADVICE).exists()
    # demo-3: the agent searched it and answered with its words, naming the document.
    assert "→ search_knowledge({'query': 'What should I pack for Paris in November?'})" in printed
    [answer] = [line for line in printed.splitlines() if "The travel handbook (cities.md" in line]
    assert PACKING_ADVICE in answer and PACKING_ADVICE in (FILES / "cities.md").read_text()
    [search] = ToolExecution.objects.filter(session_id="demo-3", tool_name="search_knowledge")
    assert search.status == "succeeded"

    again = StringIO()
    call_command("load_demo", stdout=again)
    assert "already loaded" in again.getvalue() and "Indexed" not in again.getvalue()
    assert Tool.objects.filter(app_name="weather").count() == 1
    assert Corpus.objects.filter(app_name="weather").count() == 1 and documents.count() == 3
    forget_runners()


async def test_the_agent_run_without_the_apps_runner_has_no_handbook_and_says_so(weather_app):
    """As under ``adk web``: the handbook (tool and instruction) comes with the weather app's runner, not the agent."""
    served = get_runner(weather_app).agent
    assert any(getattr(tool, "name", "") == "search_knowledge" for tool in served.tools)
    assert HANDBOOK_INSTRUCTION in served.instruction and HANDBOOK_INSTRUCTION not in root_agent.instruction
    runner = runner_for(root_agent, app_name=weather_app, memory="off")
    message = types.Content(role="user", parts=[types.Part(text="What should I pack for Paris in November?")])

    events = [e async for e in runner.run_async(user_id="ada", session_id="s1", new_message=message)]

    assert [e.get_function_calls() for e in events] == [[]]
    assert events[-1].content.parts[0].text == (
        "[offline model] I have no travel handbook to search here: ask me about the weather instead."
    )

"""An ADK Runner with a real LlmAgent keeps its conversation in PostgreSQL."""

from __future__ import annotations

import pytest
from google.adk.agents import LlmAgent
from google.adk.runners import Runner
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from cognizes.adk import PostgresSessionService
from tests.fake_llm import ScriptedLlm

pytestmark = pytest.mark.django_db(transaction=True)

APP = "weather_app"


def remember_city(city: str, tool_context: ToolContext) -> dict:
    """Remember the city the user asks about."""
    visits = tool_context.state.get("visits", 0) + 1
    tool_context.state["visits"] = visits
    tool_context.state["user:last_city"] = city
    tool_context.state["temp:scratch"] = "never stored"
    return {"city": city, "visits": visits}


def make_runner(service: PostgresSessionService) -> Runner:
    agent = LlmAgent(name="weather_agent", model=ScriptedLlm(), tools=[remember_city])
    return Runner(agent=agent, app_name=APP, session_service=service)


async def ask(runner: Runner, session_id: str, text: str) -> list:
    message = types.Content(role="user", parts=[types.Part(text=text)])
    return [event async for event in runner.run_async(user_id="ada", session_id=session_id, new_message=message)]


async def test_a_run_is_persisted_reloaded_by_a_new_service_and_continued():
    first_service = PostgresSessionService()
    session = await first_service.create_session(app_name=APP, user_id="ada")

    events = await ask(make_runner(first_service), session.id, "Paris")
    assert events[-1].content.parts[0].text == "Done: {'city': 'Paris', 'visits': 1}"

    second_service = PostgresSessionService()
    reloaded = await second_service.get_session(app_name=APP, user_id="ada", session_id=session.id)
    assert [e.author for e in reloaded.events] == ["user", "weather_agent", "weather_agent", "weather_agent"]
    assert reloaded.events[1].content.parts[0].function_call.name == "remember_city"
    assert reloaded.state == {"visits": 1, "user:last_city": "Paris"}

    events = await ask(make_runner(second_service), session.id, "Oslo")
    assert events[-1].content.parts[0].text == "Done: {'city': 'Oslo', 'visits': 2}"

    final = await PostgresSessionService().get_session(app_name=APP, user_id="ada", session_id=session.id)
    assert len(final.events) == 8
    assert [e.content.parts[0].text for e in final.events if e.author == "user"] == ["Paris", "Oslo"]
    assert final.state == {"visits": 2, "user:last_city": "Oslo"}
    assert await second_service.get_user_state(app_name=APP, user_id="ada") == {"last_city": "Oslo"}

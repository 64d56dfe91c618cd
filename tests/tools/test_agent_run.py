"""An ADK agent uses the app's registry tools live, and every call it makes is audited."""

from __future__ import annotations

import logging

import pytest
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.runners import Runner
from google.genai import types

from cognizes.adk import AuditPlugin, DatabaseToolset, PostgresSessionService, approval_message
from cognizes.infra.db_threads import run_in_db_thread
from tests.tools.conftest import WeatherApi, weather_document
from tests.tools.fake_llm import ToolCallingLlm
from tools_app import services
from tools_app.models import ApprovalStatus, Tool, ToolApproval, ToolExecution

pytestmark = pytest.mark.django_db(transaction=True)

APP = "travel_app"


class Agent:
    """One running agent process: a Runner over the registry, kept alive across turns."""

    def __init__(self, extra_tools: list | None = None) -> None:
        self.audit = AuditPlugin()
        tools = [DatabaseToolset(), *(extra_tools or [])]
        agent = LlmAgent(name="travel_agent", model=ToolCallingLlm(), tools=tools)
        self.sessions = PostgresSessionService()
        self.runner = Runner(app=App(name=APP, root_agent=agent, plugins=[self.audit]), session_service=self.sessions)

    async def start(self) -> str:
        return (await self.sessions.create_session(app_name=APP, user_id="ada")).id

    async def send(self, session_id: str, message: str | types.Content) -> list:
        if isinstance(message, str):
            message = types.Content(role="user", parts=[types.Part(text=message)])
        events = [e async for e in self.runner.run_async(user_id="ada", session_id=session_id, new_message=message)]
        await self.audit.flush()
        return events

    async def ask(self, session_id: str, text: str) -> str:
        events = await self.send(session_id, text)
        return events[-1].content.parts[0].text


async def executions() -> list[ToolExecution]:
    return await run_in_db_thread(lambda: list(ToolExecution.objects.order_by("started_at", "id")))


async def register(weather_api: str) -> None:
    await run_in_db_thread(services.do_import_openapi, app_name=APP, document=weather_document(weather_api))
    await run_in_db_thread(
        services.do_create_tool,
        app_name=APP,
        name="convert_currency",
        kind="python",
        callable_path="tests.tools.callables.convert_currency",
    )


async def test_an_agent_calls_openapi_and_python_tools_and_each_call_is_audited(weather_api):
    await register(weather_api)
    agent = Agent()
    session_id = await agent.start()

    assert await agent.ask(session_id, 'get_weather {"city": "Paris"}') == 'Done: {"city": "Paris", "temp": 21}'
    assert await agent.ask(session_id, 'convert_currency {"amount": 10, "currency": "USD"}') == (
        'Done: {"amount": 12.5, "currency": "USD"}'
    )

    weather, currency = await executions()
    assert (weather.tool_name, weather.tool_version, weather.status) == ("get_weather", 1, "succeeded")
    assert weather.arguments == {"city": "Paris"}
    assert weather.result == {"city": "Paris", "temp": 21}
    assert (weather.app_name, weather.user_id, weather.session_id) == (APP, "ada", session_id)
    assert (currency.tool_name, currency.status, currency.result) == (
        "convert_currency",
        "succeeded",
        {"amount": 12.5, "currency": "USD"},
    )
    session = await agent.sessions.get_session(app_name=APP, user_id="ada", session_id=session_id)
    calls = [(e.invocation_id, c.id) for e in session.events for c in e.get_function_calls()]
    assert [
        (weather.invocation_id, weather.function_call_id),
        (currency.invocation_id, currency.function_call_id),
    ] == calls
    assert weather.invocation_id != currency.invocation_id
    assert weather.duration_ms > 0


async def test_an_edit_between_two_turns_reaches_the_running_agent_without_a_restart(weather_api):
    await register(weather_api)
    agent = Agent()
    session_id = await agent.start()
    assert await agent.ask(session_id, 'get_weather {"city": "Oslo"}') == 'Done: {"city": "Oslo", "temp": 21}'

    tool = await run_in_db_thread(Tool.objects.get, app_name=APP, name="get_weather")
    await run_in_db_thread(services.do_update_tool, tool, changes={"base_url": f"{weather_api}/v2"}, actor="ops")

    assert await agent.ask(session_id, 'get_weather {"city": "Oslo"}') == (
        'Done: {"api": "v2", "city": "Oslo", "temp": 21}'
    )
    assert [e.tool_version for e in await executions()] == [1, 2]


async def test_a_disabled_tool_disappears_and_an_enabled_one_comes_back(weather_api):
    await register(weather_api)
    agent = Agent()
    session_id = await agent.start()
    tools = await run_in_db_thread(lambda: list(Tool.objects.filter(name="convert_currency")))

    await run_in_db_thread(services.do_set_enabled, tools, enabled=False)
    assert await agent.ask(session_id, 'convert_currency {"amount": 1, "currency": "GBP"}') == (
        "I have no tool convert_currency."
    )
    await run_in_db_thread(services.do_set_enabled, tools, enabled=True)
    assert await agent.ask(session_id, 'convert_currency {"amount": 1, "currency": "GBP"}') == (
        'Done: {"amount": 0.5, "currency": "GBP"}'
    )


async def test_an_error_of_the_remote_api_is_audited_as_an_error(weather_api):
    await register(weather_api)
    agent = Agent()
    session_id = await agent.start()

    answer = await agent.ask(session_id, "get_broken {}")

    assert "Status Code: 500" in answer
    [execution] = await executions()
    assert execution.status == "failed"
    assert "Status Code: 500" in execution.error
    assert "the weather station is down" in execution.error


async def test_a_tool_needing_approval_runs_only_once_a_person_approves(weather_api):
    await register(weather_api)
    tool = await run_in_db_thread(Tool.objects.get, app_name=APP, name="make_transfer")
    await run_in_db_thread(services.do_update_tool, tool, changes={"requires_approval": True})
    agent = Agent()
    session_id = await agent.start()

    await agent.send(session_id, 'make_transfer {"amount": 50, "to": "bob"}')

    assert not [r for r in WeatherApi.requests if r[0] == "POST"]
    approval = await run_in_db_thread(ToolApproval.objects.get)
    assert (approval.tool_name, approval.arguments, approval.status) == (
        "make_transfer",
        {"amount": 50, "to": "bob"},
        ApprovalStatus.PENDING,
    )
    assert await approval_message(app_name=APP, user_id="ada", session_id=session_id) is None

    await run_in_db_thread(services.do_decide_approval, approval, approved=True, actor="grace")
    resume = await approval_message(app_name=APP, user_id="ada", session_id=session_id)
    events = await agent.send(session_id, resume)

    assert events[-1].content.parts[0].text == 'Done: {"to": "bob", "transferred": 50}'
    assert [r[:2] for r in WeatherApi.requests] == [("POST", "/transfers")]
    assert [(e.status, e.function_call_id) for e in await executions()] == [
        ("pending_approval", approval.function_call_id),
        ("succeeded", approval.function_call_id),
    ]
    assert await approval_message(app_name=APP, user_id="ada", session_id=session_id) is None


async def test_a_rejected_call_never_reaches_the_api(weather_api):
    await register(weather_api)
    tool = await run_in_db_thread(Tool.objects.get, app_name=APP, name="make_transfer")
    await run_in_db_thread(services.do_update_tool, tool, changes={"requires_approval": True})
    agent = Agent()
    session_id = await agent.start()
    await agent.send(session_id, 'make_transfer {"amount": 50, "to": "mallory"}')

    approval = await run_in_db_thread(ToolApproval.objects.get)
    await run_in_db_thread(services.do_decide_approval, approval, approved=False, actor="grace")
    events = await agent.send(session_id, await approval_message(app_name=APP, user_id="ada", session_id=session_id))

    assert events[-1].content.parts[0].text == 'Done: {"error": "This tool call is rejected."}'
    assert WeatherApi.requests == []
    assert [e.status for e in await executions()] == ["pending_approval", "rejected"]


def a_code_defined_tool_whose_name_is_longer_than_the_audit_column_allows_by_design(text: str) -> dict:
    """Echo the text."""
    return {"echo": text}


async def test_a_failed_audit_write_is_logged_and_never_reaches_the_agent(caplog):
    agent = Agent(extra_tools=[a_code_defined_tool_whose_name_is_longer_than_the_audit_column_allows_by_design])
    session_id = await agent.start()

    # The name overflows tool_executions.tool_name (64): PostgreSQL refuses the audit row for real.
    answer = await agent.ask(
        session_id, 'a_code_defined_tool_whose_name_is_longer_than_the_audit_column_allows_by_design {"text": "hi"}'
    )

    assert answer == 'Done: {"echo": "hi"}'
    assert await executions() == []
    assert "audit write failed: do_record_execution" in caplog.text


async def test_a_registry_without_the_tools_asked_for_is_said_once(weather_api, caplog):
    """An agent run under another app name silently lost its registry tools."""
    caplog.set_level(logging.WARNING, logger="tools_app.adk")  # whatever level earlier tests left the root at
    await register(weather_api)
    named = DatabaseToolset(app_name="another_app", tool_filter=["get_weather"])
    present = DatabaseToolset(app_name=APP, tool_filter=["get_weather"])

    for _ in range(2):
        assert await named.get_tools() == []
        assert [t.name for t in await present.get_tools()] == ["get_weather"]
    warnings = [r.getMessage() for r in caplog.records if r.name == "tools_app.adk"]
    assert warnings == [
        "The tool registry of app 'another_app' lacks get_weather: registry tools belong to one app. Add them for "
        "'another_app' (admin, or POST /api/v1/apps/another_app/tools/), or run the agent under the app that has them."
    ]

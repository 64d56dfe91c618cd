"""Google's Agent Registry API on a real server, read through ADK's own ``AgentRegistry`` (cognizes.vertex's
subclass, pointed at Cognizes with a key): the app's served agent with the A2A card it serves, its tool registry
as an MCP server, paging, the filters clients send, Google's errors, other apps' keys; and a local ADK agent that
discovers both through the registry and uses them in one turn."""

from __future__ import annotations

import json
import logging
import subprocess
from collections.abc import AsyncGenerator, Iterator

import httpx
import pytest
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types

from cognizes.access.services import do_create_api_key
from cognizes.infra.db_threads import run_in_db_thread
from cognizes.vertex import AgentRegistry
from runtime_app import mcp_memory
from sessions_app.models import Session
from tests.docs.snippets import PYTHON, blocks_of, for_server
from tests.processes import ROOT
from tests.test_package import _user_env
from tests.test_package import venv as venv  # the wheel installed in a fresh virtualenv (a fixture)
from tests.test_package import wheel as wheel
from tests.vertex.test_official_clients import CLIENTS, _go, _run
from tools_app import direct
from tools_app.models import ToolExecution
from vertex_app import agent_registry
from vertex_app.services import do_get_or_create_engine

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.filterwarnings("ignore::UserWarning")]

PARENT = "projects/my-project/locations/us-central1"
PREFERENCE = "[offline model] Got it: from now on I'll give temperatures in Fahrenheit."


@pytest.fixture(autouse=True)
def _fresh_tools(monkeypatch) -> Iterator[None]:
    monkeypatch.setenv("GOOGLE_API_USE_CLIENT_CERTIFICATE", "false")  # no ADC mTLS probe for a plain HTTP server
    direct.forget_tools()
    yield
    direct.forget_tools()


def _key(app_name: str = "weather", **kwargs) -> str:
    return do_create_api_key(name="registry", app_name=app_name, **kwargs)[1]


def _registry(base: str, key: str, **kwargs) -> AgentRegistry:
    return AgentRegistry(base_url=base, api_key=key, project="my-project", location="us-central1", **kwargs)


def _get(base: str, path: str, key: str | None, **params) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.get(f"{base}/v1/{PARENT}/{path}", params=params, headers=headers, timeout=60)


def test_the_apps_agent_is_a_record_embedding_the_card_it_serves_and_its_registry_an_mcp_server(
    weather_app,
    asgi_server,
):
    registry = _registry(asgi_server, _key(user_id="ada"))

    listed = registry.list_agents()
    [agent] = listed["agents"]
    served_card = httpx.get(f"{asgi_server}/a2a/weather/.well-known/agent-card.json").json()
    servers = registry.list_mcp_servers()["mcpServers"]

    assert "nextPageToken" not in listed
    assert (agent["name"], agent["agentId"], agent["displayName"], agent["location"]) == (
        f"{PARENT}/agents/weather",
        "weather",
        "weather_assistant",
        "us-central1",
    )
    assert agent["card"] == {"type": "A2A_AGENT_CARD", "content": served_card}  # the very card A2A serves
    assert agent["protocols"] == [
        {
            "type": "A2A_AGENT",
            "protocolVersion": "1.0",
            "interfaces": [{"url": f"{asgi_server}/a2a/weather", "protocolBinding": "JSONRPC"}],
        }
    ]
    assert [skill["name"] for skill in agent["skills"]] == [skill["name"] for skill in served_card["skills"]]
    assert "attributes" not in agent  # the app has no Vertex engine yet
    assert registry.get_agent_info(agent["name"]) == agent
    [server] = servers
    assert (server["name"], server["mcpServerId"], server["displayName"]) == (
        f"{PARENT}/mcpServers/weather-tools",
        "weather-tools",
        "weather",
    )
    assert server["interfaces"] == [{"url": f"{asgi_server}/mcp/weather/", "protocolBinding": "JSONRPC"}]
    assert [tool["name"] for tool in server["tools"]] == [*mcp_memory.TOOLS, "get_weather"]  # the memory's first
    assert server["tools"][-1]["description"].startswith("Current weather in a city")
    assert registry.get_mcp_server(server["name"]) == server
    assert registry.list_endpoints() == {"endpoints": []}


def test_lists_come_in_pages_and_another_source_of_mcp_servers_is_one_call(
    weather_app,
    asgi_server,
    monkeypatch,
):
    monkeypatch.setattr(agent_registry, "MCP_SERVER_SOURCES", list(agent_registry.MCP_SERVER_SOURCES))

    @agent_registry.mcp_server_source
    async def elsewhere(place: agent_registry.Place) -> list[dict]:
        return [
            {
                "name": f"{place.parent}/mcpServers/{place.app_name}-{n}",
                "mcpServerId": f"{place.app_name}-{n}",
                "displayName": f"Ville {n}",
                "interfaces": [{"url": f"https://mcp.example/{n}", "protocolBinding": "JSONRPC"}],
            }
            for n in ("außen", "東京")
        ]

    registry = _registry(asgi_server, _key())
    first = registry.list_mcp_servers(page_size=2)
    second = registry.list_mcp_servers(page_size=2, page_token=first["nextPageToken"])
    agents = registry.list_agents(page_size=1)

    assert [s["mcpServerId"] for s in first["mcpServers"]] == ["weather-tools", "weather-außen"]
    assert [s["mcpServerId"] for s in second["mcpServers"]] == ["weather-東京"] and "nextPageToken" not in second
    assert registry.get_mcp_server(f"{PARENT}/mcpServers/weather-東京")["displayName"] == "Ville 東京"
    assert len(agents["agents"]) == 1 and "nextPageToken" not in agents
    by_name = registry.list_mcp_servers(filter_str='displayName:"東京" AND interfaces.url:"mcp.example"')
    assert [s["mcpServerId"] for s in by_name["mcpServers"]] == ["weather-東京"]
    bad = _get(asgi_server, "mcpServers", _key(), pageToken="not-one-of-ours")
    assert (bad.status_code, bad.json()["error"]["status"]) == (400, "INVALID_ARGUMENT")
    too_big = _get(asgi_server, "agents", _key(), pageSize="5000")
    assert too_big.status_code == 400 and "pageSize" in too_big.json()["error"]["message"]


def test_the_filters_clients_send(weather_app, asgi_server):
    engine = do_get_or_create_engine(app_name="weather")
    registry = _registry(asgi_server, _key())

    def agent_ids(filter_str: str) -> list[str]:
        return [a["agentId"] for a in registry.list_agents(filter_str=filter_str).get("agents", [])]

    # ADK for Python, deployed, looks for the record of its own engine by this attribute (a substring match).
    own = (
        f'attributes."{agent_registry.RUNTIME_REFERENCE}".uri:'
        f'"/locations/us-central1/reasoningEngines/{engine.engine_id}"'
    )
    assert agent_ids(own) == ["weather"]
    assert agent_ids(own.removesuffix('"') + '9"') == []
    assert agent_ids('agentId="weather"') == ["weather"] and agent_ids('agentId="other"') == []
    assert agent_ids('displayName:"weather" AND skills.name:"Get weather"') == ["weather"]
    assert agent_ids('agentId!="weather"') == []
    [agent] = registry.list_agents()["agents"]
    assert agent["attributes"][agent_registry.RUNTIME_REFERENCE]["uri"] == (
        f"//aiplatform.googleapis.com/{PARENT}/reasoningEngines/{engine.engine_id}"
    )
    tools = registry.list_mcp_servers(filter_str='tools.name:"get_weather"')["mcpServers"]
    assert [s["mcpServerId"] for s in tools] == ["weather-tools"]
    assert registry.list_mcp_servers(filter_str='tools.name="nothing"') == {"mcpServers": []}
    found = registry.search_agents(search_string="WEATHER city")["agents"]
    assert [a["agentId"] for a in found] == ["weather"]
    assert registry.search_mcp_servers(search_string="nothing like it") == {"mcpServers": []}

    for bad in ('colour="red"', 'agentId="weather" OR agentId="x"', "agentId", 'agentId="a" AND'):
        answer = _get(asgi_server, "agents", _key(), filter=bad)
        assert (answer.status_code, answer.json()["error"]["status"]) == (400, "INVALID_ARGUMENT"), bad


def test_googles_errors_and_a_key_sees_only_its_apps_records(weather_app, asgi_server):
    key, other = _key(user_id="ada"), _key("other_app")

    missing = _get(asgi_server, "agents/nobody", key)
    assert missing.status_code == 404
    assert missing.json()["error"] == {
        "code": 404,
        "message": f"{PARENT}/agents/nobody does not exist.",
        "status": "NOT_FOUND",
    }
    assert _get(asgi_server, "mcpServers/nobody-tools", key).json()["error"]["status"] == "NOT_FOUND"
    assert _get(asgi_server, "endpoints/some-model", key).status_code == 404
    # Another app's key: none of the weather app's records, each a 404 as if it did not exist.
    assert _get(asgi_server, "agents", other).json() == {"agents": []}
    assert _get(asgi_server, "agents/weather", other).status_code == 404
    assert [s["mcpServerId"] for s in _get(asgi_server, "mcpServers", other).json()["mcpServers"]] == [
        "other_app-tools"
    ]
    assert _get(asgi_server, "mcpServers/weather-tools", other).status_code == 404
    unauthenticated = _get(asgi_server, "agents", None)
    assert (unauthenticated.status_code, unauthenticated.json()["error"]["status"]) == (401, "UNAUTHENTICATED")
    assert _get(asgi_server, "agents", "not-a-key").status_code == 401
    # Google's API-key header works as on the other Vertex paths; a read-only key reads.
    by_header = httpx.get(f"{asgi_server}/v1/{PARENT}/agents", headers={"x-goog-api-key": _key(read_only=True)})
    assert [a["agentId"] for a in by_header.json()["agents"]] == ["weather"]
    assert _get(asgi_server, "bindings", key).json() == {"bindings": []}
    # Bad input: a clear 400 (405), in Google's shape.
    search, auth = f"{asgi_server}/v1/{PARENT}/agents:search", {"Authorization": f"Bearer {key}"}
    for body in (["weather"], {"query": "weather"}, {"searchString": 7}):
        answer = httpx.post(search, json=body, headers=auth)
        assert (answer.status_code, answer.json()["error"]["status"]) == (400, "INVALID_ARGUMENT"), body
    assert _get(asgi_server, "agents", key, filter='agentId="\x00"').status_code == 400
    posted = httpx.post(f"{asgi_server}/v1/{PARENT}/agents", json={}, headers=auth)
    assert (posted.status_code, posted.json()["error"]["status"]) == (405, "METHOD_NOT_ALLOWED")
    with pytest.raises(RuntimeError, match="404"):
        _registry(asgi_server, other).get_remote_a2a_agent(f"{PARENT}/agents/weather")


class DiscoveringLlm(BaseLlm):
    """Calls the registry's weather tool over MCP, then hands the conversation to the remote agent over A2A."""

    model: str = "discovering-offline"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1]
        if any(part.function_response for part in last.parts or []):
            call = types.FunctionCall(name="transfer_to_agent", args={"agent_name": "weather_assistant"})
        else:
            call = types.FunctionCall(name="weather_get_weather", args={"city": "Paris", "unit": "fahrenheit"})
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))


async def test_a_local_agent_discovers_a_cognizes_agent_and_mcp_server_and_uses_both_in_one_turn(
    weather_app,
    asgi_server,
    caplog,
):
    key = await run_in_db_thread(_key, user_id="ada")
    registry = _registry(asgi_server, key)
    remote = registry.get_remote_a2a_agent(f"{PARENT}/agents/weather")
    tools = registry.get_mcp_toolset(f"{PARENT}/mcpServers/weather-tools")
    listed = [tool.name for tool in await tools.get_tools()]
    assert sorted(listed) == sorted([*mcp_memory.TOOLS, "get_weather"])  # the key goes outside a turn too
    runner = InMemoryRunner(
        LlmAgent(name="traveller", model=DiscoveringLlm(), tools=[tools], sub_agents=[remote]), app_name="elsewhere"
    )
    try:
        session = await runner.session_service.create_session(app_name="elsewhere", user_id="someone")
        message = types.Content(role="user", parts=[types.Part(text="I prefer Fahrenheit.")])
        with caplog.at_level(logging.WARNING):
            events = [e async for e in runner.run_async(user_id="someone", session_id=session.id, new_message=message)]
    finally:
        await tools.close()

    responses = [
        part.function_response
        for e in events
        if e.content
        for part in e.content.parts or []
        if part.function_response and part.function_response.name == "weather_get_weather"
    ]
    [weather] = responses
    assert json.loads(weather.response["content"][0]["text"])["temperature"] == 64  # 18°C in Paris, from Cognizes
    texts = [
        part.text
        for e in events
        if e.author == "weather_assistant" and e.content
        for part in e.content.parts or []
        if part.text and not part.thought
    ]
    assert texts == [PREFERENCE]  # the Cognizes agent answered over A2A
    [execution] = await run_in_db_thread(lambda: list(ToolExecution.objects.all()))
    assert (execution.app_name, execution.user_id, execution.tool_name, execution.status) == (
        "weather",
        "ada",
        "get_weather",
        "succeeded",
    )
    assert await run_in_db_thread(Session.objects.filter(app_name="weather", user_id="ada").count) == 1
    assert not [r for r in caplog.records if "bindings" in r.getMessage()]  # ADK read the (empty) bindings


def test_adk_for_go_discovers_the_agent_and_mcp_server_through_its_registry_client_and_uses_both(
    weather_app,
    asgi_server,
):
    """tests/clients/go/registry: ADK for Go's agentregistry, its HTTP client sending to Cognizes (README)."""
    binary = _go("./registry", CLIENTS / "go" / "cognizes-go-registry")
    keys = {"COGNIZES_KEY": _key(user_id="ada"), "COGNIZES_APP_KEY": _key()}
    output = _run([str(binary)], {"COGNIZES_URL": asgi_server, **keys}, checks=12)

    assert "ok: the Cognizes agent answered over A2A" in output
    assert "ok: a key of the whole app without X-User-Id is told over A2A how to name its user" in output  # issue 43
    assert "ok: a key of the whole app without X-User-Id is told over MCP how to name its user" in output
    [execution] = ToolExecution.objects.filter(client__contains="(MCP ")  # the Go agent's call (its own turn's too)
    assert (execution.app_name, execution.user_id, execution.tool_name, execution.arguments, execution.status) == (
        "weather",
        "ada",
        "get_weather",
        {"city": "Paris", "unit": "fahrenheit"},
        "succeeded",
    )
    assert Session.objects.filter(app_name="weather", user_id="ada").count() == 1  # the A2A conversation


_TOP_LEVEL_AWAIT = """
import ast, asyncio, sys
code = compile(sys.stdin.read(), "<snippet>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
result = eval(code, {"__name__": "__main__"})
if asyncio.iscoroutine(result):
    asyncio.run(result)
"""


def test_the_docs_registry_snippet_runs_from_an_empty_folder_with_the_installed_package(
    weather_app, asgi_server, venv, tmp_path
):
    """Issue 43 item 3: the Python snippet of docs/api/agent-registry.md, as printed, run by the python of a
    virtualenv holding the wheel (the checkout nowhere on its path: no PYTHONPATH, no editable install), from an
    empty folder. The docs test runs it with the checkout on PYTHONPATH, which would hide an import from it."""
    [block] = [b for b in blocks_of(ROOT / "docs" / "api" / "agent-registry.md", ROOT) if b.language in PYTHON]
    code = for_server(block.code, base_url=asgi_server, grpc_target="")
    env = {**_user_env(), "KEY": _key(), "GOOGLE_API_USE_CLIENT_CERTIFICATE": "false"}
    done = subprocess.run(
        [venv / "bin" / "python", "-c", _TOP_LEVEL_AWAIT],
        input=code,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    tools = str(sorted([*mcp_memory.TOOLS, "get_weather"]))  # ADK's MCP toolset lists by name
    assert done.stdout.splitlines() == [f"weather_assistant {tools}"], done.stdout

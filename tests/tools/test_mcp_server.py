"""Every app's tool registry is an MCP server at /mcp/{app}/, on a real server: the mcp SDK's own client and ADK's
McpToolset (inside an agent turn) list and call its tools, on the path agents' calls take, each call audited."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator

import httpx
import httpx2
import pytest
from google.adk.agents import LlmAgent
from google.adk.runners import InMemoryRunner
from google.adk.tools.mcp_tool import McpToolset, StreamableHTTPConnectionParams
from google.genai import types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from cognizes.access.services import do_create_api_key
from cognizes.infra.db_threads import run_in_db_thread
from runtime_app import mcp_memory
from tests.api.test_body_limits import _exchange, _head
from tests.tools.conftest import WeatherApi, weather_document
from tests.tools.fake_llm import ToolCallingLlm
from tools_app import direct, secrets, services
from tools_app.models import Tool, ToolApproval, ToolExecution

pytestmark = pytest.mark.django_db(transaction=True)

APP = "travel_app"
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}


@pytest.fixture(autouse=True)
def _fresh_tools() -> Iterator[None]:
    direct.forget_tools()
    yield
    direct.forget_tools()


async def _key(app_name: str = APP, **kwargs) -> dict[str, str]:
    _, key = await run_in_db_thread(do_create_api_key, name="mcp", app_name=app_name, **kwargs)
    return {"Authorization": f"Bearer {key}"}


def _rpc(method: str, params: dict | None = None, id: int = 1) -> dict:
    return {"jsonrpc": "2.0", "id": id, "method": method, **({"params": params} if params is not None else {})}


def _call(name: str, arguments: dict, id: int = 1) -> dict:
    return _rpc("tools/call", {"name": name, "arguments": arguments}, id)


async def _post(base: str, body, headers: dict[str, str], path: str = f"/mcp/{APP}/") -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        return await http.post(path, content=content, headers={**HEADERS, **headers})


async def _register(weather_api: str) -> None:
    await run_in_db_thread(services.do_import_openapi, app_name=APP, document=weather_document(weather_api))


async def _executions() -> list[ToolExecution]:
    return await run_in_db_thread(lambda: list(ToolExecution.objects.order_by("started_at", "id")))


async def _tool(name: str) -> Tool:
    return await run_in_db_thread(Tool.objects.get, app_name=APP, name=name)


async def test_the_sdk_client_lists_the_registry_live_and_calls_with_the_rows_secret_each_call_audited(
    asgi_server, weather_api, monkeypatch
):
    await _register(weather_api)
    await run_in_db_thread(secrets.do_set_secret, app_name=APP, name="WEATHER_TOKEN", value="s3cret")
    await run_in_db_thread(
        services.do_update_tool,
        await _tool("get_weather"),
        changes={"auth_scheme": "bearer", "auth_secret_name": "WEATHER_TOKEN"},
    )
    async with (
        httpx2.AsyncClient(headers=await _key(user_id="ada")) as http,
        Client(streamable_http_client(f"{asgi_server}/mcp/{APP}/", http_client=http)) as client,
    ):
        before = [tool.name for tool in (await client.list_tools()).tools if tool.name not in mcp_memory.TOOLS]
        await run_in_db_thread(
            services.do_create_tool,
            app_name=APP,
            name="convert_currency",
            kind="python",
            callable_path="tests.tools.callables.convert_currency",
        )
        listed = {tool.name: tool for tool in (await client.list_tools()).tools if tool.name not in mcp_memory.TOOLS}
        weather = await client.call_tool("get_weather", {"city": "Paris"})
        money = await client.call_tool("convert_currency", {"amount": 10, "currency": "USD"})

    assert before == ["get_broken", "get_weather", "make_transfer"]
    assert sorted(listed) == ["convert_currency", "get_broken", "get_weather", "make_transfer"]  # added: listed at once
    assert listed["get_weather"].input_schema["required"] == ["city"]
    assert listed["get_weather"].annotations.read_only_hint is True
    assert listed["convert_currency"].input_schema["properties"]["currency"] == {"title": "Currency", "type": "string"}
    assert (weather.is_error, weather.structured_content) == (False, {"city": "Paris", "temp": 21})
    assert (money.is_error, money.structured_content) == (False, {"amount": 12.5, "currency": "USD"})
    assert [(method, path, headers.get("Authorization")) for method, path, headers in WeatherApi.requests] == [
        ("GET", "/weather/Paris", "Bearer s3cret")
    ]
    first, second = await _executions()
    assert (first.app_name, first.user_id, first.session_id, first.tool_name, first.tool_version, first.status) == (
        APP,
        "ada",
        "mcp",
        "get_weather",
        2,
        "succeeded",
    )
    assert (first.arguments, first.result) == ({"city": "Paris"}, {"city": "Paris", "temp": 21})
    assert first.client.startswith("mcp/") and first.client.endswith("(MCP 2026-07-28)")  # the SDK's own client
    assert (second.tool_name, second.arguments, second.status) == (
        "convert_currency",
        {"amount": 10, "currency": "USD"},
        "succeeded",
    )


async def test_adk_mcp_toolset_calls_a_registry_tool_inside_a_real_agent_turn(asgi_server, weather_api, monkeypatch):
    monkeypatch.setenv("GOOGLE_API_USE_CLIENT_CERTIFICATE", "false")  # no ADC mTLS probe for a plain HTTP server
    await _register(weather_api)
    toolset = McpToolset(
        connection_params=StreamableHTTPConnectionParams(
            url=f"{asgi_server}/mcp/{APP}/", headers=await _key(user_id="grace")
        ),
        tool_filter=["get_weather"],
    )
    runner = InMemoryRunner(
        LlmAgent(name="remote_traveller", model=ToolCallingLlm(), tools=[toolset]), app_name="elsewhere"
    )
    try:
        session = await runner.session_service.create_session(app_name="elsewhere", user_id="someone")
        message = types.Content(role="user", parts=[types.Part(text='get_weather {"city": "Oslo"}')])
        events = [e async for e in runner.run_async(user_id="someone", session_id=session.id, new_message=message)]
    finally:
        await toolset.close()

    answer = events[-1].content.parts[0].text
    assert answer.startswith("Done: ") and json.loads(answer[len("Done: ") :])["structuredContent"] == {
        "city": "Oslo",
        "temp": 21,
    }
    [execution] = await _executions()
    assert (execution.app_name, execution.user_id, execution.tool_name, execution.arguments, execution.status) == (
        APP,
        "grace",
        "get_weather",
        {"city": "Oslo"},
        "succeeded",
    )  # the key's app and user, not the client's
    assert execution.client.endswith("(MCP 2025-11-25)")  # ADK's client speaks the handshake revision


async def test_keys_and_scopes_as_on_the_other_surfaces(asgi_server, weather_api):
    await _register(weather_api)
    listing, call = _rpc("tools/list"), _call("get_weather", {"city": "Rome"})

    missing = await _post(asgi_server, listing, {})
    assert (missing.status_code, missing.headers["www-authenticate"]) == (401, 'Bearer realm="cognizes"')
    assert "Send a Cognizes API key" in missing.json()["error"]["message"]
    assert (await _post(asgi_server, listing, {"Authorization": "Bearer nope"})).status_code == 401
    assert (await _post(asgi_server, listing, await _key("other_app", user_id="ada"))).status_code == 404
    read_only = await _key(user_id="ada", read_only=True)
    assert (await _post(asgi_server, listing, read_only)).json()["result"]["tools"]
    refused = await _post(asgi_server, call, read_only)
    assert refused.status_code == 403 and "This API key is read-only" in refused.json()["error"]["message"]
    app_wide = await _key()
    assert (await _post(asgi_server, listing, app_wide)).json()["result"]["tools"]  # listing needs no user
    unnamed = await _post(asgi_server, call, app_wide)
    assert (unnamed.status_code, unnamed.json()["id"]) == (400, 1)  # a call acts for someone; its id: Go reads it
    assert (await _post(asgi_server, call, {**app_wide, "X-User-Id": "lin"})).json()["result"]["isError"] is False
    user_key = await _key(user_id="ada")
    assert (await _post(asgi_server, call, {**user_key, "X-User-Id": "mallory"})).status_code == 200

    assert [(e.user_id, e.status) for e in await _executions()] == [("lin", "succeeded"), ("ada", "succeeded")]


async def test_the_sdk_client_with_a_key_of_the_whole_app_is_told_how_to_name_its_user(asgi_server, weather_api):
    """Issue 43 item 1: the refusal is a JSON-RPC error the client raises, naming the header and the other way out."""
    await _register(weather_api)
    async with (
        httpx2.AsyncClient(headers=await _key()) as http,
        Client(streamable_http_client(f"{asgi_server}/mcp/{APP}/", http_client=http)) as client,
    ):
        assert (await client.list_tools()).tools  # listing acts for no one
        with pytest.raises(MCPError) as refused:
            await client.call_tool("get_weather", {"city": "Paris"})
        read_only = await _key(user_id="ada", read_only=True)
        async with (
            httpx2.AsyncClient(headers=read_only) as reader_http,
            Client(streamable_http_client(f"{asgi_server}/mcp/{APP}/", http_client=reader_http)) as reader,
        ):
            with pytest.raises(MCPError) as read_only_refused:
                await reader.call_tool("get_weather", {"city": "Paris"})

    message = refused.value.error.message
    assert "X-User-Id" in message and f"create_api_key {APP} --user" in message, message
    assert "read-only" in read_only_refused.value.error.message
    assert f"create_api_key {APP}" in read_only_refused.value.error.message
    assert await _executions() == []


async def test_a_call_needing_approval_answers_so_and_runs_once_a_person_approves(asgi_server, weather_api):
    await _register(weather_api)
    await run_in_db_thread(services.do_update_tool, await _tool("make_transfer"), changes={"requires_approval": True})
    key, transfer = await _key(user_id="ada"), _call("make_transfer", {"amount": 5, "to": "bob"})

    paused = (await _post(asgi_server, transfer, key)).json()["result"]
    again = (await _post(asgi_server, transfer, key)).json()["result"]  # nobody decided yet: not asked twice
    approval = await run_in_db_thread(ToolApproval.objects.get)
    await run_in_db_thread(services.do_decide_approval, approval, approved=True, actor="grace")
    ran = (await _post(asgi_server, transfer, key)).json()["result"]
    once_more = (await _post(asgi_server, transfer, key)).json()["result"]  # an approval is for one call

    assert paused["isError"] and "waits for a person to approve" in paused["content"][0]["text"]
    assert again["isError"] and f"approval {approval.id}" in again["content"][0]["text"]
    assert (approval.tool_name, approval.arguments, approval.user_id, approval.session_id) == (
        "make_transfer",
        {"amount": 5, "to": "bob"},
        "ada",
        "mcp",
    )
    assert (ran["isError"], ran["structuredContent"]) == (False, {"transferred": 5, "to": "bob"})
    assert once_more["isError"] and "waits for a person" in once_more["content"][0]["text"]
    assert [path for _, path, _ in WeatherApi.requests] == ["/transfers"]
    executions = await _executions()
    assert [e.status for e in executions] == ["pending_approval", "succeeded", "pending_approval"]
    assert executions[0].function_call_id == executions[1].function_call_id == approval.function_call_id
    assert await run_in_db_thread(ToolApproval.objects.count) == 2


async def test_a_python_tool_needing_approval_runs_once_approved_too(asgi_server):
    await run_in_db_thread(
        services.do_create_tool,
        app_name=APP,
        name="wire_money",
        kind="python",
        callable_path="tests.tools.callables.wire_money",
        requires_approval=True,
    )
    key, wire = await _key(user_id="ada"), _call("wire_money", {"amount": 7, "to": "bob"})

    paused = (await _post(asgi_server, wire, key)).json()["result"]
    await run_in_db_thread(
        services.do_decide_approval, await run_in_db_thread(ToolApproval.objects.get), approved=True, actor="grace"
    )
    ran = (await _post(asgi_server, wire, key)).json()["result"]

    assert paused["isError"] and (ran["isError"], ran["structuredContent"]) == (False, {"sent": 7, "to": "bob"})
    assert [e.status for e in await _executions()] == ["pending_approval", "succeeded"]


async def test_a_rejected_call_never_reaches_the_api(asgi_server, weather_api):
    await _register(weather_api)
    await run_in_db_thread(services.do_update_tool, await _tool("make_transfer"), changes={"requires_approval": True})
    key, transfer = await _key(user_id="ada"), _call("make_transfer", {"amount": 500, "to": "eve"})
    await _post(asgi_server, transfer, key)
    await run_in_db_thread(
        services.do_decide_approval, await run_in_db_thread(ToolApproval.objects.get), approved=False, actor="grace"
    )

    rejected = (await _post(asgi_server, transfer, key)).json()["result"]

    assert rejected["isError"] and "rejected" in rejected["content"][0]["text"]
    assert WeatherApi.requests == []
    assert [e.status for e in await _executions()] == ["pending_approval", "rejected"]


async def test_bad_requests_get_a_json_rpc_error_or_a_4xx_and_change_nothing(asgi_server, weather_api, settings):
    await _register(weather_api)
    key = await _key(user_id="ada")

    def error(response: httpx.Response) -> tuple[int, int]:
        return response.status_code, response.json()["error"]["code"]

    assert error(await _post(asgi_server, b"{not json", key)) == (400, -32700)
    assert error(await _post(asgi_server, {"jsonrpc": "2.0", "id": 1}, key))[0] == 400
    assert error(await _post(asgi_server, _rpc("resources/nothing"), key)) == (200, -32601)
    unknown = await _post(asgi_server, _call("get_wether", {"city": "Paris"}), key)
    assert error(unknown) == (200, -32602) and "no enabled tool 'get_wether'" in unknown.json()["error"]["message"]
    wrong_type = await _post(asgi_server, _call("get_weather", {"city": 3}), key)
    assert error(wrong_type) == (200, -32602) and "city: 3 is not of type 'string'" in wrong_type.text
    missing = await _post(asgi_server, _call("make_transfer", {"amount": 5}), key)
    assert error(missing) == (200, -32602) and "'to' is a required property" in missing.text
    assert error(await _post(asgi_server, _rpc("tools/call", {"name": "get_weather", "arguments": "x"}), key)) == (
        200,
        -32602,
    )
    huge = json.dumps(_call("get_weather", {"city": "x" * (10 * 1024 * 1024)})).encode()
    raw_key = key["Authorization"].split()[1]
    status, body, _ = await asyncio.to_thread(
        _exchange,
        asgi_server,
        _head("POST", f"/mcp/{APP}/", raw_key, Accept=HEADERS["Accept"], Content_Length=str(len(huge))),
        [huge],
    )
    assert (status, body["error"]["message"]) == (413, "The request body is larger than 1048576 bytes.")
    async with httpx.AsyncClient(base_url=asgi_server) as http:
        stream = await http.get(f"/mcp/{APP}/", headers={**HEADERS, **key})
        assert (stream.status_code, stream.headers["allow"]) == (405, "POST")
        assert (await http.delete(f"/mcp/{APP}/", headers={**HEADERS, **key})).status_code == 405
    assert (await _post(asgi_server, _rpc("tools/list"), key, path="/mcp/")).status_code == 404
    assert (await _post(asgi_server, _rpc("tools/list"), key, path=f"/mcp/{APP}/tools")).status_code == 404

    assert WeatherApi.requests == []
    assert await _executions() == []
    assert await run_in_db_thread(ToolApproval.objects.count) == 0


async def test_an_upstream_that_is_down_or_slow_is_a_tool_error_and_an_audit_row(asgi_server, weather_api, silent_api):
    await _register(weather_api)
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    down = f"http://127.0.0.1:{closed.getsockname()[1]}"
    closed.close()
    weather = await _tool("get_weather")
    await run_in_db_thread(services.do_update_tool, weather, changes={"base_url": down})
    key, call = await _key(user_id="ada"), _call("get_weather", {"city": "Paris"})

    refused = (await _post(asgi_server, call, key)).json()["result"]
    await run_in_db_thread(services.do_update_tool, weather, changes={"base_url": silent_api, "timeout_seconds": 0.5})
    hung = (await _post(asgi_server, call, key)).json()["result"]
    broken = (await _post(asgi_server, _call("get_broken", {}), key)).json()["result"]

    assert refused["isError"] and hung["isError"] and broken["isError"]
    assert "timed out" in hung["content"][0]["text"]
    executions = await _executions()
    assert [(e.tool_name, e.status) for e in executions] == [
        ("get_weather", "failed"),
        ("get_weather", "failed"),
        ("get_broken", "failed"),
    ]
    assert executions[1].duration_ms < 5000 and "timed out" in executions[1].error

"""External MCP servers are registry rows: registered over the API, their tools reach a running agent through
``DatabaseToolset`` (ADK's ``McpToolset``), filtered, hot-updated and audited, against a real MCP server process."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from cognizes.access.services import do_create_api_key
from cognizes.adk import approval_message
from cognizes.infra.db_threads import run_in_db_thread
from tests.processes import ROOT, free_port
from tests.tools.test_agent_run import APP, executions
from tests.tools.test_agent_run import Agent as RegistryAgent
from tools_app import direct, mcp_servers, secrets, services
from tools_app.models import McpServer, ToolApproval

pytestmark = pytest.mark.django_db(transaction=True)

SERVERS = f"/api/v1/apps/{APP}/mcp-servers/"
WORDS = "東京で会いましょう — Привет, café, 안녕하세요"


def _start(*args: str) -> Iterator[int]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.tools.mcp_upstream", str(port), *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while True:
        assert process.poll() is None and time.monotonic() < deadline, "the MCP server did not start"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
    yield port
    process.terminate()
    process.wait(10)


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    """The URL of a real MCP server (the SDK's MCPServer over Streamable HTTP) in its own process."""
    for port in _start():
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(scope="module")
def upstream_sse() -> Iterator[str]:
    """The same server over the older HTTP+SSE transport."""
    for port in _start("sse"):
        yield f"http://127.0.0.1:{port}/sse"


@pytest.fixture
def down() -> str:
    """A URL nobody listens on."""
    return f"http://127.0.0.1:{free_port()}/mcp"


_running: list[RegistryAgent] = []


class Agent(RegistryAgent):
    """An agent over the registry whose runner the test closes (its MCP sessions with it)."""

    def __init__(self) -> None:
        super().__init__()
        _running.append(self)


@pytest.fixture(autouse=True)
async def _close_agents() -> AsyncIterator[None]:
    yield
    while _running:
        await _running.pop().runner.close()


@pytest.fixture(autouse=True)
def _no_mtls_probe(monkeypatch) -> None:
    monkeypatch.setenv("GOOGLE_API_USE_CLIENT_CERTIFICATE", "false")  # no ADC mTLS probe for a plain HTTP server


async def _key(app_name: str = APP, **kwargs) -> dict[str, str]:
    _, key = await run_in_db_thread(do_create_api_key, name="ops", app_name=app_name, **kwargs)
    return {"Authorization": f"Bearer {key}"}


async def _api(base: str, method: str, path: str, key: dict[str, str], body: dict | None = None) -> httpx.Response:
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        return await http.request(method, path, json=body, headers=key)


async def _answer(agent: Agent, session_id: str, text: str) -> dict | str:
    """The tool result the model got back (echoed by the fake model), or its plain reply."""
    answer = await agent.ask(session_id, text)
    return json.loads(answer[len("Done: ") :]) if answer.startswith("Done: ") else answer


def _text(result: dict) -> dict:
    """What the server's tool returned (its text content, JSON)."""
    return json.loads(result["content"][0]["text"])


async def test_an_agent_calls_a_registered_servers_tools_with_its_secret_headers_each_call_audited(
    asgi_server, upstream, monkeypatch
):
    key = await _key()
    stored = await _api(
        asgi_server, "PUT", f"/api/v1/apps/{APP}/secrets/UPSTREAM_KEY/", key, {"value": "s3cret-upstream"}
    )
    assert stored.status_code == 201 and "s3cret" not in stored.text
    created = await _api(
        asgi_server,
        "POST",
        SERVERS,
        key,
        {
            "name": "upstream",
            "url": upstream,
            "description": "Echoes, in any language.",
            "headers": {"X-Tenant": "acme"},
            "auth_scheme": "api_key_header",
            "auth_header_name": "X-Api-Key",
            "auth_secret_name": "UPSTREAM_KEY",
            "denied_tools": ["delete_everything"],
        },
    )
    assert created.status_code == 201, created.text
    assert "s3cret" not in created.text and "acme" not in created.text  # the row names the secret; headers write-only
    assert created.json()["header_names"] == ["X-Tenant"]
    agent = Agent()
    session_id = await agent.start()

    echoed = await _answer(agent, session_id, f"echo {json.dumps({'text': WORDS})}")
    who = await _answer(agent, session_id, "whoami {}")

    assert _text(echoed) == {"echo": WORDS} and echoed["isError"] is False
    assert _text(who) == {"api_key": "s3cret-upstream", "tenant": "acme"}
    first, second = await executions()
    assert (first.app_name, first.user_id, first.session_id, first.tool_name, first.mcp_server, first.status) == (
        APP,
        "ada",
        session_id,
        "echo",
        "upstream",
        "succeeded",
    )
    assert first.arguments == {"text": WORDS} and _text(first.result) == {"echo": WORDS}
    assert (first.tool_version, second.tool_name, second.status) == (1, "whoami", "succeeded")
    listed = (await _api(asgi_server, "GET", f"{SERVERS}upstream/", key)).json()
    assert sorted(t["name"] for t in listed["discovered_tools"]) == [
        "delete_everything",
        "echo",
        "fail",
        "slow",
        "whoami",
    ]  # what the server has, allowed or not
    offered = await run_in_db_thread(mcp_servers.offered_mcp_servers, app_name=APP)
    assert [(s["name"], s["url"], s["description"]) for s in offered] == [
        ("upstream", upstream, "Echoes, in any language.")
    ]
    assert sorted(t["name"] for t in offered[0]["tools"]) == ["echo", "fail", "slow", "whoami"]
    # The Agent Registry lists it beside the app's own registry, at its own URL, without its headers or secret.
    registry = await _api(asgi_server, "GET", "/v1/projects/p/locations/l/mcpServers", key)
    records = {record["mcpServerId"]: record for record in registry.json()["mcpServers"]}
    record = records[f"{APP}-mcp-upstream"]
    assert (record["displayName"], record["interfaces"]) == (
        "upstream",
        [{"url": upstream, "protocolBinding": "JSONRPC"}],
    )
    assert sorted(tool["name"] for tool in record["tools"]) == ["echo", "fail", "slow", "whoami"]
    assert "s3cret" not in registry.text and "acme" not in registry.text
    # Cognizes' own MCP server for the app serves its registry, not other servers' tools.
    assert [tool.name for tool in await direct.offered_tools(APP)] == []


async def test_allow_and_deny_lists_and_edits_reach_the_running_agent(asgi_server, upstream, caplog, settings):
    caplog.set_level(
        logging.WARNING, logger="tools_app.secret_headers"
    )  # whatever level earlier tests left the root at
    settings.COGNIZES_ENV_SECRETS = {APP: ["NOT_SET_ANYWHERE"]}
    key = await _key()
    await _api(
        asgi_server,
        "POST",
        SERVERS,
        key,
        {
            "name": "upstream",
            "url": upstream,
            "denied_tools": ["delete_everything"],
            "auth_scheme": "api_key_header",
            "auth_header_name": "X-Api-Key",
            "auth_secret_source": "env",
            "auth_secret_name": "NOT_SET_ANYWHERE",
        },
    )
    agent = Agent()
    session_id = await agent.start()
    assert await _answer(agent, session_id, "delete_everything {}") == "I have no tool delete_everything."
    assert _text(await _answer(agent, session_id, "whoami {}")) == {"api_key": "", "tenant": ""}  # never sent empty
    assert "tool secret NOT_SET_ANYWHERE is not set in the environment" in caplog.text

    edited = await _api(
        asgi_server,
        "PATCH",
        f"{SERVERS}upstream/",
        key,
        {"allowed_tools": ["echo"], "tool_name_prefix": "up", "expected_version": 1},
    )
    assert (edited.status_code, edited.json()["version"]) == (200, 2)
    assert await _answer(agent, session_id, "up_whoami {}") == "I have no tool up_whoami."
    assert _text(await _answer(agent, session_id, 'up_echo {"text": "hi"}')) == {"echo": "hi"}

    await _api(asgi_server, "PATCH", f"{SERVERS}upstream/", key, {"enabled": False})
    assert await _answer(agent, session_id, 'up_echo {"text": "hi"}') == "I have no tool up_echo."
    await _api(asgi_server, "PATCH", f"{SERVERS}upstream/", key, {"enabled": True})
    assert _text(await _answer(agent, session_id, 'up_echo {"text": "again"}')) == {"echo": "again"}
    assert [(e.tool_name, e.tool_version) for e in await executions()] == [
        ("whoami", 1),
        ("up_echo", 2),
        ("up_echo", 4),
    ]


async def test_a_server_down_or_slow_is_a_clear_tool_error_and_never_stops_the_turn_or_the_other_tools(
    asgi_server, upstream, down, silent_api
):
    key = await _key()
    await _api(asgi_server, "POST", SERVERS, key, {"name": "upstream", "url": upstream, "timeout_seconds": 3})
    await _api(asgi_server, "POST", SERVERS, key, {"name": "gone", "url": down, "tool_name_prefix": "gone"})
    await _api(
        asgi_server,
        "POST",
        SERVERS,
        key,
        {"name": "hung", "url": f"{silent_api}/mcp", "tool_name_prefix": "hung", "timeout_seconds": 0.5},
    )
    agent = Agent()
    session_id = await agent.start()

    started = time.monotonic()
    slow = await _answer(agent, session_id, 'slow {"seconds": 60}')
    slow_took = time.monotonic() - started  # the hung server's listing (0.5 s, one retry) and the slow call (3 s)
    failed = await _answer(agent, session_id, "fail {}")
    fine = await _answer(agent, session_id, 'echo {"text": "still here"}')  # the server that is down took nothing

    assert "did not answer slow within 3 s (timed out)" in slow["error"] and slow_took < 10
    assert failed["isError"] is True and failed["error"] == "Error executing tool fail"  # what the server says
    assert _text(fine) == {"echo": "still here"}
    # The server goes away after it listed its tools: agents still get them, a call says what happened.
    await _api(asgi_server, "PATCH", f"{SERVERS}upstream/", key, {"url": down})
    gone = await _answer(agent, session_id, 'echo {"text": "anyone?"}')
    assert "The MCP server 'upstream' failed to run echo" in gone["error"]
    audited = await executions()
    assert [(e.tool_name, e.mcp_server, e.status) for e in audited] == [
        ("slow", "upstream", "failed"),
        ("fail", "upstream", "failed"),
        ("echo", "upstream", "succeeded"),
        ("echo", "upstream", "failed"),
    ]
    assert "timed out" in audited[0].error and audited[1].error == "Error executing tool fail"


async def test_a_server_on_a_private_address_is_refused_unless_private_networks_are_allowed(
    asgi_server, upstream, settings
):
    settings.COGNIZES_TOOLS_ALLOW_PRIVATE_NETWORK = False
    await _api(asgi_server, "POST", SERVERS, await _key(), {"name": "upstream", "url": upstream})
    agent = Agent()
    session_id = await agent.start()

    assert await _answer(agent, session_id, 'echo {"text": "hi"}') == "I have no tool echo."
    server = await run_in_db_thread(McpServer.objects.get)
    assert server.discovered_tools == []  # it was never asked

    settings.COGNIZES_TOOLS_ALLOW_PRIVATE_NETWORK = True
    assert await _answer(agent, session_id, 'echo {"text": "hi"}') == "I have no tool echo."  # a failure waits a bit
    fresh = Agent()
    assert _text(await _answer(fresh, await fresh.start(), 'echo {"text": "hi"}')) == {"echo": "hi"}


async def test_the_sse_transport_and_a_call_needing_approval(asgi_server, upstream_sse):
    key = await _key()
    created = await _api(
        asgi_server,
        "POST",
        SERVERS,
        key,
        {"name": "old_style", "url": upstream_sse, "transport": "sse", "requires_approval": True},
    )
    assert created.status_code == 201, created.text
    agent = Agent()
    session_id = await agent.start()

    await agent.send(session_id, f"echo {json.dumps({'text': WORDS})}")

    approval = await run_in_db_thread(ToolApproval.objects.get)
    assert (approval.tool_name, approval.arguments) == ("echo", {"text": WORDS})
    await run_in_db_thread(services.do_decide_approval, approval, approved=True, actor="grace")
    events = await agent.send(session_id, await approval_message(app_name=APP, user_id="ada", session_id=session_id))

    answer = events[-1].content.parts[0].text
    assert _text(json.loads(answer[len("Done: ") :])) == {"echo": WORDS}
    assert [(e.status, e.mcp_server) for e in await executions()] == [
        ("pending_approval", "old_style"),
        ("succeeded", "old_style"),
    ]
    registry = (await _api(asgi_server, "GET", "/v1/projects/p/locations/l/mcpServers", key)).json()
    assert f"{APP}-mcp-old_style" not in [r["mcpServerId"] for r in registry.get("mcpServers", [])]  # no SSE binding


async def test_keys_scopes_and_bad_rows_as_on_the_rest_of_the_api(asgi_server, upstream):
    key = await _key()
    path = f"{SERVERS}upstream/"
    assert (await _api(asgi_server, "POST", SERVERS, key, {"name": "upstream", "url": upstream})).status_code == 201

    assert (await _api(asgi_server, "GET", SERVERS, {})).status_code == 401
    other = await _key("other_app")
    assert (await _api(asgi_server, "GET", path, other)).status_code == 404
    assert (await _api(asgi_server, "PATCH", path, other, {"url": "http://evil.example/mcp"})).status_code == 404
    assert (await _api(asgi_server, "DELETE", path, other)).status_code == 404
    assert (await _api(asgi_server, "GET", "/api/v1/apps/other_app/mcp-servers/", other)).json()["count"] == 0
    user_key = await _key(user_id="ada")
    assert [s["name"] for s in (await _api(asgi_server, "GET", SERVERS, user_key)).json()["results"]] == ["upstream"]
    assert (await _api(asgi_server, "PATCH", path, user_key, {"enabled": False})).status_code == 403
    assert (await _api(asgi_server, "PATCH", path, await _key(read_only=True), {"enabled": False})).status_code == 403
    assert (await _api(asgi_server, "PATCH", path, key, {"enabled": False, "expected_version": 7})).status_code == 409
    assert (await _api(asgi_server, "POST", SERVERS, key, {"name": "upstream", "url": upstream})).status_code == 409

    for bad, field in [
        ({"url": "file:///etc/passwd"}, "url"),
        ({"transport": "stdio"}, "transport"),
        ({"headers": {"Host": "evil"}}, "headers"),
        ({"headers": {"authorization": "Bearer t0ken"}}, "headers"),
        ({"headers": {"X-A": "one\r\nX-B: two"}}, "headers"),
        ({"headers": ["X-A"]}, "headers"),
        ({"allowed_tools": "echo"}, "allowed_tools"),
        ({"auth_scheme": "bearer"}, "auth_secret_name"),
        ({"name": "9 lives"}, "name"),
        ({"timeout_seconds": 0}, "timeout_seconds"),
        ({"tool_name_prefix": "a-b"}, "tool_name_prefix"),
    ]:
        refused = await _api(asgi_server, "PATCH", path, key, bad)
        assert refused.status_code == 400 and field in refused.json()["error"]["details"], (bad, refused.text)
        assert (
            await _api(asgi_server, "POST", SERVERS, key, {"name": "second", "url": upstream, **bad})
        ).status_code == 400
    row = await run_in_db_thread(McpServer.objects.get)
    assert (row.name, row.url, row.version, row.enabled, row.headers) == ("upstream", upstream, 1, True, {})
    assert (await _api(asgi_server, "DELETE", path, key)).status_code == 204
    assert await run_in_db_thread(McpServer.objects.count) == 0


def _admin_form(**changes: str) -> dict[str, str]:
    form = {
        "app_name": APP,
        "name": "upstream",
        "description": "",
        "url": "https://mcp.example/mcp",
        "transport": "streamable_http",
        "headers": '{"X-Tenant": "acme"}',
        "allowed_tools": "[]",
        "denied_tools": '["delete_everything"]',
        "tool_name_prefix": "",
        "enabled": "on",
        "auth_scheme": "bearer",
        "auth_secret_source": "app",
        "auth_secret_name": "UPSTREAM_TOKEN",
        "auth_header_name": "X-API-Key",
        "timeout_seconds": "5",
        "list_cache_seconds": "60",
    }
    return {key: value for key, value in {**form, **changes}.items() if value is not None}


def test_staff_add_and_edit_servers_in_the_admin_and_a_bad_edit_changes_nothing(
    admin_client, client, django_user_model
):
    secrets.do_set_secret(app_name=APP, name="UPSTREAM_TOKEN", value="t0ken-upstream")
    assert admin_client.post("/admin/tools_app/mcpserver/add/", _admin_form()).status_code == 302
    server = McpServer.objects.get()
    assert (server.headers, server.denied_tools, server.auth_secret_name, server.version) == (
        {"X-Tenant": "acme"},
        ["delete_everything"],
        "UPSTREAM_TOKEN",
        1,
    )
    page = admin_client.get(f"/admin/tools_app/mcpserver/{server.pk}/change/").content.decode()
    assert "tools it listed last" in page.lower()
    assert page.index('name="auth_scheme"') > page.index('name="url"')  # the secret's fields beside the timeout

    refused = admin_client.post(
        f"/admin/tools_app/mcpserver/{server.pk}/change/",
        _admin_form(url="ftp://mcp.example", headers='{"Host": "evil"}'),
    )
    assert refused.status_code == 200
    assert "An http:// or https:// URL" in refused.content.decode() and "is not a header a row may set" in (
        refused.content.decode()
    )
    server.refresh_from_db()
    assert (server.url, server.version) == ("https://mcp.example/mcp", 1)
    assert (
        admin_client.post(f"/admin/tools_app/mcpserver/{server.pk}/change/", _admin_form(enabled=None)).status_code
        == 302
    )
    admin_client.post("/admin/tools_app/mcpserver/", {"action": "enable", "_selected_action": [server.pk]})
    server.refresh_from_db()
    assert (server.enabled, server.version) == (True, 3)

    django_user_model.objects.create_user("visitor", password="pw")
    client.login(username="visitor", password="pw")
    assert client.get("/admin/tools_app/mcpserver/").status_code == 302  # staff only: to the login page

"""Memory over MCP (issue 45 item 4): every app's MCP server at /mcp/{app}/ offers the caller's user's memory —
remember, search, list, forget — driven here by the mcp SDK's own client against a real server."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from cognizes.access.services import do_create_api_key
from cognizes.infra.db_threads import run_in_db_thread
from memory_app.models import Memory, Status
from tests.docs.snippets import blocks_of
from tests.processes import ROOT
from tools_app import direct
from tools_app import services as tool_services

pytestmark = pytest.mark.django_db(transaction=True)

APP = "notes_app"
MEMORY_TOOLS = ["remember", "search_memories", "list_memories", "forget_memory"]


async def _key(app_name: str = APP, **kwargs) -> dict[str, str]:
    _, key = await run_in_db_thread(do_create_api_key, name="mcp", app_name=app_name, **kwargs)
    return {"Authorization": f"Bearer {key}"}


@asynccontextmanager
async def _client(base: str, headers: dict[str, str]) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        Client(streamable_http_client(f"{base}/mcp/{APP}/", http_client=http)) as client,
    ):
        yield client


def _texts(result) -> list[str]:
    assert result.is_error is False, result.content
    return [memory["text"] for memory in result.structured_content["memories"]]


async def test_a_users_key_remembers_a_fact_and_finds_it_by_meaning(asgi_server):
    async with _client(asgi_server, await _key(user_id="ada")) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        for fact in ("I am allergic to peanuts.", "My dog Biscuit loves running on the beach."):
            assert (await client.call_tool("remember", {"text": fact})).is_error is False
        again = await client.call_tool("remember", {"text": "I am allergic to peanuts."})
        found = await client.call_tool("search_memories", {"query": "Which food allergy do I have?", "limit": 1})
        every = await client.call_tool("list_memories", {})

    assert list(listed)[:4] == MEMORY_TOOLS
    assert "long-term memory" in listed["remember"].description and listed["remember"].input_schema["required"] == [
        "text"
    ]
    assert listed["search_memories"].annotations.read_only_hint is True
    assert listed["forget_memory"].annotations.destructive_hint is True
    assert _texts(found) == ["I am allergic to peanuts."]
    assert again.structured_content["status"].startswith("merged")  # said again: not stored twice
    assert sorted(_texts(every)) == ["I am allergic to peanuts.", "My dog Biscuit loves running on the beach."]
    stored = await run_in_db_thread(lambda: list(Memory.objects.values_list("app_name", "user_id").distinct()))
    assert stored == [(APP, "ada")]


@pytest.mark.parametrize(
    ("fact", "other", "question"),
    [
        pytest.param("我喜欢在北京吃烤鸭。", "我每个星期天打网球。", "我最喜欢吃什么菜？", id="chinese"),
        pytest.param(
            "私は東京の大学で物理学を勉強しています。",
            "私の犬の名前はポチです。",
            "大学で何を勉強していますか？",
            id="japanese",
        ),
        pytest.param(
            "저는 서울에서 피아노를 가르칩니다.", "제 고양이는 세 살입니다.", "저는 무슨 일을 하나요?", id="korean"
        ),
        pytest.param("Я живу в Москве и работаю учителем.", "Мой брат любит футбол.", "Кем я работаю?", id="russian"),
        pytest.param(
            "J'adore le café crème à Besançon.",
            "Ma sœur habite à Genève.",
            "Quelle boisson est-ce que j'aime ?",
            id="accented",
        ),
    ],
)
async def test_facts_in_every_language_are_remembered_and_found_by_a_question(asgi_server, fact, other, question):
    async with _client(asgi_server, await _key(user_id="Zoë")) as client:
        await client.call_tool("remember", {"text": other})
        await client.call_tool("remember", {"text": fact})
        found = await client.call_tool("search_memories", {"query": question, "limit": 1})
        listed = await client.call_tool("list_memories", {})

    assert _texts(found) == [fact]
    assert _texts(listed) == [fact, other]  # newest first, as written
    assert json.loads(found.content[0].text)["memories"][0]["text"] == fact  # the text content: not \u-escaped JSON
    assert fact in found.content[0].text


async def test_another_users_key_cannot_see_or_forget_a_memory(asgi_server):
    async with _client(asgi_server, await _key(user_id="ada")) as ada:
        created = await ada.call_tool("remember", {"text": "My locker code is 4711."})
        memory_id = created.structured_content["id"]
        app_key = await _key()
        async with (
            _client(asgi_server, await _key(user_id="bob")) as bob,
            _client(asgi_server, {**app_key, "X-User-Id": "carol"}) as carol,
            _client(asgi_server, {**await _key(user_id="bob"), "X-User-Id": "ada"}) as bob_as_ada,
        ):
            posing = await bob_as_ada.call_tool("search_memories", {"query": "locker code"})
            bob_found = await bob.call_tool("search_memories", {"query": "locker code"})
            bob_listed = await bob.call_tool("list_memories", {"limit": 50})
            bob_forgot = await bob.call_tool("forget_memory", {"memory_id": memory_id})
            carol_found = await carol.call_tool("search_memories", {"query": "locker code"})
            await carol.call_tool("remember", {"text": "My locker code is 1234."})
        still = await ada.call_tool("search_memories", {"query": "locker code"})
        forgot = await ada.call_tool("forget_memory", {"memory_id": memory_id})
        after = await ada.call_tool("search_memories", {"query": "locker code"})

    assert (
        _texts(bob_found) == _texts(bob_listed) == _texts(carol_found) == _texts(posing) == []
    )  # a user's key: its own
    assert bob_forgot.is_error and bob_forgot.content[0].text == f"forget_memory: Memory {memory_id} not found."
    assert _texts(still) == ["My locker code is 4711."]
    assert forgot.structured_content == {"id": memory_id, "status": "forgotten"}
    assert _texts(after) == []
    memory = await run_in_db_thread(Memory.objects.get, id=memory_id)
    assert (memory.user_id, memory.status) == ("ada", Status.FORGOTTEN)
    assert await run_in_db_thread(Memory.objects.filter(user_id="carol").count) == 1  # the header's user


async def test_hostile_arguments_are_tool_errors_that_change_nothing(asgi_server):
    async with _client(asgi_server, await _key(user_id="ada")) as client:
        refused = {
            "empty": await client.call_tool("remember", {"text": "   "}),
            "huge": await client.call_tool("remember", {"text": "x" * 200_000}),
            "number": await client.call_tool("remember", {"text": 42}),
            "list": await client.call_tool("remember", {"text": ["x" * 200_000]}),
            "missing": await client.call_tool("remember", {}),
            "empty query": await client.call_tool("search_memories", {"query": ""}),
            "huge query": await client.call_tool("search_memories", {"query": "q" * 100_000}),
            "big limit": await client.call_tool("list_memories", {"limit": 10**9}),
            "fraction": await client.call_tool("search_memories", {"query": "x", "limit": 2.5}),
            "not an id": await client.call_tool("forget_memory", {"memory_id": "../../etc"}),
            "unknown id": await client.call_tool(
                "forget_memory", {"memory_id": "00000000-0000-0000-0000-000000000000"}
            ),
            "object id": await client.call_tool("forget_memory", {"memory_id": {"$ne": ""}}),
            "nul": await client.call_tool("remember", {"text": "I like\x00 tea."}),
            "nul query": await client.call_tool("search_memories", {"query": "tea\x00"}),
        }

    assert {name: result.is_error for name, result in refused.items()} == dict.fromkeys(refused, True)
    messages = {name: result.content[0].text for name, result in refused.items()}
    assert messages["empty"] == "remember: A memory needs text."
    assert messages["huge"] == "remember: A memory is at most 10000 characters."
    assert "42 is not of type 'string'" in messages["number"]
    assert "is not of type 'string'" in messages["list"] and len(messages["list"]) < 600  # not echoed whole
    assert "'text' is a required property" in messages["missing"]
    assert "query needs text" in messages["empty query"]
    assert "COGNIZES_MAX_QUERY_CHARS" in messages["huge query"]
    assert "is greater than the maximum of 50" in messages["big limit"]
    assert "not a memory id" in messages["not an id"]
    assert messages["nul"] == "remember: Text may not contain NUL (\\u0000) characters; PostgreSQL cannot store them."
    assert "NUL" in messages["nul query"]
    assert await run_in_db_thread(Memory.objects.count) == 0


async def test_raw_json_a_number_past_float_and_a_read_only_key(asgi_server):
    """``1e400`` reads as infinity: a tool error, not a 500; a read-only key may search and list, not write."""
    headers = {
        **await _key(user_id="ada"),
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-11-25",
    }
    arguments = b'{"name": "list_memories", "arguments": {"limit": 1e400}}'
    body = b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": ' + arguments + b"}"
    async with httpx.AsyncClient(base_url=asgi_server, timeout=30) as http:
        infinite = await http.post(f"/mcp/{APP}/", content=body, headers=headers)
        reader = {**headers, **await _key(user_id="ada", read_only=True)}
        call = {"jsonrpc": "2.0", "id": 8, "method": "tools/call"}
        search = {**call, "params": {"name": "search_memories", "arguments": {"query": "anything"}}}
        remember = {**call, "params": {"name": "remember", "arguments": {"text": "I like tea."}}}
        searched = await http.post(f"/mcp/{APP}/", content=json.dumps(search), headers=reader)
        written = await http.post(f"/mcp/{APP}/", content=json.dumps(remember), headers=reader)

    assert infinite.status_code == 200 and infinite.json()["result"]["isError"] is True
    assert "such as 1e400" in infinite.json()["result"]["content"][0]["text"]
    assert searched.status_code == 200 and searched.json()["result"]["structuredContent"] == {"memories": []}
    assert written.status_code == 403 and "read-only" in written.json()["error"]["message"]
    assert await run_in_db_thread(Memory.objects.count) == 0


def test_the_docs_show_cursor_and_claude_desktop_configurations_for_the_memory():
    """The JSON blocks of docs/api/mcp.md's memory section are shown, not run: they parse, in each client's shape."""
    blocks = [json.loads(b.code) for b in blocks_of(ROOT / "docs" / "api" / "mcp.md", ROOT) if b.language == "json"]
    [cursor] = [b["mcpServers"]["cognizes"] for b in blocks if "url" in b["mcpServers"]["cognizes"]]
    [desktop] = [b["mcpServers"]["cognizes"] for b in blocks if "command" in b["mcpServers"]["cognizes"]]

    assert cursor["url"].endswith("/mcp/weather/") and cursor["headers"]["Authorization"].startswith("Bearer ")
    assert desktop["command"] == "npx" and desktop["args"][0].startswith("mcp-remote")
    assert desktop["args"][1].endswith("/mcp/weather/") and desktop["args"][2:] == ["--header", "Authorization:${AUTH}"]
    assert desktop["env"]["AUTH"].startswith("Bearer ")


async def test_a_registry_tool_named_like_a_memory_tool_leaves_the_memory_tool_in_its_place(asgi_server, settings):
    """One tool per name on the server: the memory's, so a client relying on it keeps it whatever the app registers."""
    settings.COGNIZES_TOOL_CALLABLES = ["tests.tools.callables.convert_currency"]
    direct.forget_tools()
    for name in ("remember", "convert_currency"):
        await run_in_db_thread(
            tool_services.do_create_tool,
            app_name=APP,
            name=name,
            kind="python",
            callable_path="tests.tools.callables.convert_currency",
        )
    async with _client(asgi_server, await _key(user_id="ada")) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        remembered = await client.call_tool("remember", {"text": "I collect old maps."})
    direct.forget_tools()

    assert names == [*MEMORY_TOOLS, "convert_currency"]
    assert remembered.structured_content["status"] == "remembered"
    assert await run_in_db_thread(lambda: list(Memory.objects.values_list("text", flat=True))) == [
        "I collect old maps."
    ]

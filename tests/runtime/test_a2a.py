"""Every registered agent is an A2A server: a2a-sdk's client, raw JSON-RPC in A2A 0.3's names and ADK's
RemoteA2aAgent talk to agents served by Cognizes over a real server."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest, TaskState
from google.adk.a2a.agent import RemoteA2aAgent
from google.adk.agents import SequentialAgent
from google.adk.runners import InMemoryRunner
from google.genai import types

from cognizes.access.services import do_create_api_key
from cognizes.infra.db_threads import run_in_db_thread
from runtime_app.agents import forget_runners
from sessions_app.models import Event, Session
from tests.polling import eventually
from tests.runtime.test_http import GATE

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.filterwarnings("ignore::UserWarning")]

PREFERENCE = "[offline model] Got it: from now on I'll give temperatures in Fahrenheit."


async def _headers(app_name: str = "weather", **kwargs: Any) -> dict[str, str]:
    _, key = await run_in_db_thread(do_create_api_key, name="a2a", app_name=app_name, **kwargs)
    return {"Authorization": f"Bearer {key}"}


def _message(text: str, context_id: str = "") -> Message:
    return Message(
        role=Role.ROLE_USER,
        message_id=f"m-{abs(hash((text, context_id)))}",
        context_id=context_id,
        parts=[Part(text=text)],
    )


def _texts(task) -> list[str]:
    return [part.text for artifact in task.artifacts for part in artifact.parts if part.text]


def _rpc(method: str, params: dict, id: int = 1) -> dict:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params}


def _v03_message(text: str, context_id: str | None = None, **extra: Any) -> dict:
    message = {"kind": "message", "role": "user", "messageId": f"m-{text}", "parts": [{"kind": "text", "text": text}]}
    if context_id:
        message["contextId"] = context_id
    return {"message": message, **extra}


async def _events(app_name: str, user_id: str, session_id: str) -> list[Event]:
    return await run_in_db_thread(
        lambda: list(
            Event.objects.filter(session__app_name=app_name, session__user_id=user_id, session__session_id=session_id)
        )
    )


async def test_the_agent_card_names_the_agent_its_url_skills_and_the_key_it_needs(weather_app, asgi_server):
    async with httpx.AsyncClient(base_url=asgi_server) as http:
        card = (await http.get("/a2a/weather/.well-known/agent-card.json")).json()

    assert (card["name"], card["description"]) == (
        "weather_assistant",
        "Tells the weather in a city, in the unit the user prefers.",
    )
    assert card["supportedInterfaces"][0]["url"] == f"{asgi_server}/a2a/weather"
    assert card["capabilities"]["streaming"] is True
    assert card["securitySchemes"]["cognizesApiKey"]["httpAuthSecurityScheme"]["scheme"] == "Bearer"
    assert card["securityRequirements"] == [
        {"schemes": {"cognizesApiKey": []}}
    ]  # scopes as a list: a2a-go reads no other
    # Skills a person recognises (ADK named the agent's own "model", and showed load_memory's "Args: query…").
    skills = {skill["name"]: skill["description"] for skill in card["skills"]}
    # The registry's tool too, and the handbook's search (the weather app's runner gives it).
    assert list(skills) == ["Weather assistant", "Get weather", "Load memory", "Search knowledge"]
    assert skills["Load memory"] == "Loads the memory for the current user."
    # A2A 0.3's fields too, for 0.3 clients (tests/runtime/test_a2a_v03.py runs one).
    assert (card["url"], card["protocolVersion"]) == (f"{asgi_server}/a2a/weather", "0.3")


async def test_a_conversation_over_a2a_is_a_cognizes_session_with_its_tasks(weather_app, asgi_server):
    async with httpx.AsyncClient(headers=await _headers(user_id="ada"), timeout=60) as http:
        client = await create_client(f"{asgi_server}/a2a/weather/", ClientConfig(httpx_client=http, streaming=False))
        [told] = [
            r.task async for r in client.send_message(SendMessageRequest(message=_message("I prefer Fahrenheit.")))
        ]
        # The same context goes on in the same session, streamed this time.
        streaming = await create_client(f"{asgi_server}/a2a/weather/", ClientConfig(httpx_client=http))
        updates = [
            r
            async for r in streaming.send_message(
                SendMessageRequest(message=_message("What's the weather in Paris?", told.context_id))
            )
        ]
        fetched = await client.get_task(GetTaskRequest(id=told.id))

    assert told.status.state == TaskState.TASK_STATE_COMPLETED
    assert _texts(told) == [PREFERENCE]
    assert len(updates) > 1  # streamed: status updates, then the result
    assert "Paris" in "".join(str(update) for update in updates)
    assert fetched.id == told.id and fetched.status.state == TaskState.TASK_STATE_COMPLETED
    session = await run_in_db_thread(Session.objects.get, app_name="weather", user_id="ada", session_id=told.context_id)
    events = await _events("weather", "ada", told.context_id)
    assert [e.author for e in events][:2] == ["user", "weather_assistant"]
    assert sum(e.author == "user" for e in events) == 2 and session.version == len(events) + 1


async def test_a2a_0_3_method_names_answer_and_tasks_belong_to_their_user(weather_app, asgi_server):
    ada, bob = await _headers(user_id="ada"), await _headers(user_id="bob")
    async with httpx.AsyncClient(base_url=f"{asgi_server}/a2a/weather/", timeout=60) as http:
        sent = (
            await http.post("", json=_rpc("message/send", _v03_message("I prefer Fahrenheit.")), headers=ada)
        ).json()
        task = sent["result"]
        got = (await http.post("", json=_rpc("tasks/get", {"id": task["id"]}), headers=ada)).json()
        bobs = (await http.post("", json=_rpc("tasks/get", {"id": task["id"]}), headers=bob)).json()
        cancel = (await http.post("", json=_rpc("tasks/cancel", {"id": task["id"]}), headers=ada)).json()

    assert (task["kind"], task["status"]["state"]) == ("task", "completed")
    assert got["result"]["id"] == task["id"]
    assert bobs["error"]["code"] == -32001  # TaskNotFound: another user's task does not exist for bob
    assert cancel["error"]["code"] == -32002  # TaskNotCancelable: it is done
    assert len(await _events("weather", "ada", task["contextId"])) == 2


async def test_tasks_outlive_the_process_that_ran_them_and_list_in_pages(weather_app, asgi_server):
    ada = await _headers(user_id="ada")
    async with httpx.AsyncClient(base_url=f"{asgi_server}/a2a/weather/", headers=ada, timeout=60) as http:
        sent = [
            (await http.post("", json=_rpc("message/send", _v03_message(f"I prefer Fahrenheit. {n}")))).json()["result"]
            for n in range(3)
        ]
        forget_runners()  # as a restart, or another web process: a new runner, a new A2A server
        got = (await http.post("", json=_rpc("tasks/get", {"id": sent[0]["id"]}))).json()
        pages, token = [], ""
        while True:  # A2A 1.0's ListTasks, two at a time
            listed = (
                await http.post(
                    "", json=_rpc("ListTasks", {"pageSize": 2, "pageToken": token}), headers={"A2A-Version": "1.0"}
                )
            ).json()["result"]
            pages.append([task["id"] for task in listed["tasks"]])
            token = listed.get("nextPageToken", "")
            if not token:
                break
        bobs = (
            await http.post(
                "", json=_rpc("ListTasks", {}), headers={**await _headers(user_id="bob"), "A2A-Version": "1.0"}
            )
        ).json()["result"]

    assert got["result"]["status"]["state"] == "completed" and got["result"]["id"] == sent[0]["id"]
    assert [len(page) for page in pages] == [2, 1]
    assert sorted(task for page in pages for task in page) == sorted(task["id"] for task in sent)
    assert listed["totalSize"] == 3 and bobs.get("tasks", []) == []


async def test_an_app_wide_key_names_its_user_in_a_header(weather_app, asgi_server):
    async with httpx.AsyncClient(base_url=f"{asgi_server}/a2a/weather/", headers=await _headers(), timeout=60) as http:
        unnamed = await http.post("", json=_rpc("message/send", _v03_message("hi"), id=7))
        named = await http.post(
            "", json=_rpc("message/send", _v03_message("I prefer Fahrenheit.", "c1")), headers={"X-User-Id": "carol"}
        )

    # A JSON-RPC error, at 200 as a2a-sdk's own errors are: A2A clients read no body of a 4xx (issue 43 item 2).
    assert (unnamed.status_code, unnamed.json()["id"]) == (200, 7)
    assert "X-User-Id" in unnamed.json()["error"]["message"]
    assert named.json()["result"]["status"]["state"] == "completed"
    assert len(await _events("weather", "carol", "c1")) == 2


async def _remote_turn(headers: dict[str, str], asgi_server: str) -> list:
    """One turn of a local agent whose sub-agent is the served weather agent, over ADK's RemoteA2aAgent."""
    async with httpx.AsyncClient(headers=headers, timeout=60) as http:
        remote = RemoteA2aAgent(
            name="weather_remote",
            httpx_client=http,
            agent_card=f"{asgi_server}/a2a/weather/.well-known/agent-card.json",
        )
        runner = InMemoryRunner(agent=SequentialAgent(name="assistant", sub_agents=[remote]), app_name="caller")
        session = await runner.session_service.create_session(app_name="caller", user_id="dev")
        message = types.Content(role="user", parts=[types.Part(text="I prefer Fahrenheit.")])
        return [e async for e in runner.run_async(user_id="dev", session_id=session.id, new_message=message)]


async def test_adks_remote_agent_with_a_key_of_the_wrong_kind_is_told_which_kind_and_how_to_get_it(
    weather_app, asgi_server
):
    """Issue 43 item 2: RemoteA2aAgent showed a bare 400 (app-wide key, no user) or 403 (read-only key)."""
    app_wide = [e.error_message for e in await _remote_turn(await _headers(), asgi_server) if e.error_message]
    read_only = await _remote_turn(await _headers(user_id="ada", read_only=True), asgi_server)
    read_only_errors = [e.error_message for e in read_only if e.error_message]

    assert app_wide and "X-User-Id" in app_wide[0] and "create_api_key weather --user" in app_wide[0], app_wide
    assert read_only_errors and "read-only" in read_only_errors[0], read_only_errors
    assert "create_api_key weather" in read_only_errors[0]
    assert await run_in_db_thread(Session.objects.count) == 0


async def test_a2a_sdk_clients_streaming_or_not_raise_the_refusals_words(weather_app, asgi_server):
    async with httpx.AsyncClient(headers=await _headers(), timeout=60) as http:
        for streaming in (False, True):
            client = await create_client(
                f"{asgi_server}/a2a/weather/", ClientConfig(httpx_client=http, streaming=streaming)
            )
            with pytest.raises(Exception, match="X-User-Id") as refused:
                [r async for r in client.send_message(SendMessageRequest(message=_message("hi")))]
            assert "create_api_key weather --user" in str(refused.value)
    assert await run_in_db_thread(Session.objects.count) == 0


@pytest.mark.parametrize(
    ("headers", "path", "status"),
    [
        ({}, "/a2a/weather/", 401),
        ({"Authorization": "Bearer not-a-key"}, "/a2a/weather/", 401),
        ("other app", "/a2a/weather/", 404),
        ("read-only", "/a2a/weather/", 200),  # a JSON-RPC error: the key's kind, not its authentication
        ("ada", "/a2a/nobody/", 404),
        ("ada", "/a2a/weather/elsewhere", 404),
    ],
)
async def test_refused_calls_store_nothing(weather_app, asgi_server, headers, path, status):
    if isinstance(headers, str):
        app, kwargs = ("other", {}) if headers == "other app" else ("weather", {"user_id": "ada"})
        headers = await _headers(app, read_only=headers == "read-only", **kwargs)
    async with httpx.AsyncClient(base_url=asgi_server, timeout=60) as http:
        response = await http.post(path, json=_rpc("message/send", _v03_message("hi")), headers=headers)

    assert response.status_code == status, response.text
    assert response.json()["error"]["message"]
    assert await run_in_db_thread(Session.objects.count) == 0


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ("{not json", -32700),  # parse error
        ('{"jsonrpc": "2.0", "id": 1, "method": "tasks/explode", "params": {}}', -32601),  # no such method
        ('{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": 7}}', -32600),  # a2a-sdk: invalid
        ("[" * 100_000 + "]" * 100_000, None),
        (
            '{"jsonrpc": "2.0", "id": 1, "method": "message/send", '
            '"params": {"message": {"kind": "message", "role": "user", '
            '"messageId": "m", "contextId": "' + "c" * 5000 + '", "parts": [{"kind": "text", "text": "hi"}]}}}',
            -32602,
        ),
        (
            '{"jsonrpc": "2.0", "id": 1, "method": "message/send", '
            '"params": {"message": {"kind": "message", "role": "user", '
            '"messageId": "m", "contextId": "c\\u0000", "parts": [{"kind": "text", "text": "hi"}]}}}',
            -32602,
        ),
        ('{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "t\\u0000"}}', -32602),
    ],
)
async def test_malformed_json_rpc_gets_a_json_rpc_error(weather_app, asgi_server, body, code):
    headers = {**await _headers(user_id="ada"), "Content-Type": "application/json"}
    async with httpx.AsyncClient(base_url=asgi_server, timeout=60) as http:
        response = await http.post("/a2a/weather/", content=body, headers=headers)

    assert response.status_code < 500, response.text
    error = response.json()["error"]
    assert error["message"] and (code is None or error["code"] == code), error
    assert await run_in_db_thread(Session.objects.count) == 0


async def test_a_second_turn_of_a_busy_context_is_refused_and_a_running_task_cancels(asgi_server, settings):
    settings.COGNIZES_AGENTS = {"slow": "tests.runtime.test_http.slow_runner"}
    forget_runners()
    GATE.clear()
    headers = await _headers("slow", user_id="ada")
    try:
        async with httpx.AsyncClient(base_url=f"{asgi_server}/a2a/slow/", headers=headers, timeout=60) as http:
            started = (
                await http.post(
                    "", json=_rpc("message/send", _v03_message("one", "c1", configuration={"blocking": False}))
                )
            ).json()["result"]
            assert await eventually(lambda: _count("slow", "c1", 1), timeout=30), "the first turn did not start"

            busy = (await http.post("", json=_rpc("message/send", _v03_message("two", "c1")))).json()
            assert "Another turn of this session is running" in busy["error"]["message"], busy

            canceled = (await http.post("", json=_rpc("tasks/cancel", {"id": started["id"]}))).json()
            assert canceled["result"]["status"]["state"] == "canceled", canceled
            GATE.set()
            # Canceling let go of the session: the next turn runs.
            again = (await http.post("", json=_rpc("message/send", _v03_message("three", "c1")))).json()
            assert again["result"]["status"]["state"] == "completed", again
        previews = [e.preview for e in await _events("slow", "ada", "c1")]
        assert "two" not in previews and "three" in previews, previews
    finally:
        GATE.set()
        forget_runners()


async def _count(app_name: str, session_id: str, count: int) -> bool:
    return len(await _events(app_name, "ada", session_id)) >= count


async def test_adks_remote_agent_uses_a_cognizes_served_agent_as_its_sub_agent(weather_app, asgi_server):
    async with httpx.AsyncClient(headers=await _headers(user_id="ada"), timeout=60) as http:
        remote = RemoteA2aAgent(
            name="weather_remote",
            httpx_client=http,
            agent_card=f"{asgi_server}/a2a/weather/.well-known/agent-card.json",
        )
        runner = InMemoryRunner(agent=SequentialAgent(name="assistant", sub_agents=[remote]), app_name="caller")
        session = await runner.session_service.create_session(app_name="caller", user_id="dev")
        message = types.Content(role="user", parts=[types.Part(text="I prefer Fahrenheit.")])
        events = [e async for e in runner.run_async(user_id="dev", session_id=session.id, new_message=message)]

    assert PREFERENCE in [p.text for e in events if e.content for p in e.content.parts or [] if p.text]
    stored = await runner.session_service.get_session(app_name="caller", user_id="dev", session_id=session.id)
    # The answer once. ADK's RemoteA2aAgent also keeps the "working" status message before it as a
    # thought: ADK serving ADK does the same (closing note of issue 30), so that copy is ADK's.
    answers = [
        p.text
        for e in stored.events
        if e.author == "weather_remote" and e.content
        for p in e.content.parts or []
        if p.text and not p.thought
    ]
    assert answers == [PREFERENCE]
    served = await run_in_db_thread(lambda: list(Session.objects.filter(app_name="weather", user_id="ada")))
    assert len(served) == 1 and len(await _events("weather", "ada", served[0].session_id)) == 2

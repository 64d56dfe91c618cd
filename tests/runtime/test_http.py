"""The demo agent over HTTP, end to end: runs (whole and streamed), a live follower, the worker,
memory recall in a new session, the audit log and the traces — all through the public API."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import httpx
import pytest
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.genai import types
from opentelemetry import trace

from cognizes.access.services import do_create_api_key
from cognizes.infra.db_threads import run_in_db_thread
from memory_app.models import ConsolidationJob, JobStatus
from runtime_app.agents import forget_runners
from runtime_app.runner import runner_for
from sessions_app.models import Event, Session
from tests.api.conftest import client_for
from tests.polling import eventually
from tests.sse import Message, messages

pytestmark = pytest.mark.django_db(transaction=True)


async def _key(app_name: str = "weather", **kwargs: Any) -> dict[str, str]:
    _, key = await run_in_db_thread(do_create_api_key, name="e2e", app_name=app_name, **kwargs)
    return {"Authorization": f"Bearer {key}"}


def _texts(events: list[dict]) -> list[str]:
    return [p["text"] for e in events for p in (e.get("content") or {}).get("parts", []) if p.get("text")]


def _calls(events: list[dict]) -> list[tuple[str, dict]]:
    parts = [p for e in events for p in (e.get("content") or {}).get("parts", [])]
    return [(p["function_call"]["name"], p["function_call"]["args"]) for p in parts if p.get("function_call")]


async def _follow(client: httpx.AsyncClient, url: str, received: list[Message]) -> None:
    async with client.stream("GET", url) as response:
        assert response.status_code == 200
        async for message in messages(response):
            received.append(message)


async def test_preference_told_over_http_is_recalled_in_a_new_session(weather_app, asgi_server, celery_worker):
    base = f"{asgi_server}/api/v1/apps/weather/users/ada"
    async with httpx.AsyncClient(base_url=base, headers=await _key(), timeout=60) as client:
        assert (await client.post("/sessions/", json={"id": "s1"})).status_code == 201
        followed: list[Message] = []
        follower = asyncio.create_task(_follow(client, "/sessions/s1/events/stream/", followed))

        # s1, whole turn: the user states a preference.
        told = await client.post("/sessions/s1/run/", json={"message": "I prefer Fahrenheit."})
        assert told.status_code == 200, told.text
        assert _texts(told.json()["events"]) == [
            "[offline model] Got it: from now on I'll give temperatures in Fahrenheit."
        ]

        # s1, streamed turn.
        async with client.stream(
            "POST", "/sessions/s1/run/stream/", json={"message": "Fahrenheit, always."}
        ) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            streamed = [m async for m in messages(response)]
        assert [m.event for m in streamed] == ["event", "done"]
        assert "Fahrenheit" in _texts([streamed[0].data["event"]])[0]

        # The worker consolidates s1 into memories (one job per turn).
        async def consolidated() -> bool:
            statuses = await run_in_db_thread(
                lambda: list(ConsolidationJob.objects.filter(session_id="s1").values_list("status", flat=True))
            )
            return len(statuses) == 2 and all(s == JobStatus.DONE for s in statuses)

        assert await eventually(consolidated), "the worker did not consolidate s1"
        found = (await client.post("/memories/search/", json={"query": "temperature unit"})).json()
        assert any("Fahrenheit" in hit["text"] for hit in found), found

        # s2 (created by the run): the agent looks in memory, then calls the registry's weather tool.
        asked = await client.post("/sessions/s2/run/", json={"message": "What's the weather in Paris?"})
        assert asked.status_code == 200, asked.text
        events = asked.json()["events"]
        assert [name for name, _ in _calls(events)] == ["load_memory", "get_weather"]
        assert _calls(events)[1][1] == {"city": "Paris", "unit": "fahrenheit"}
        assert _texts(events)[-1] == "[offline model] It's 64°F and clear in Paris."

        # Audited and traced, as the API shows them.
        executions = await eventually(
            lambda: _json(
                client.get(
                    f"{asgi_server}/api/v1/apps/weather/tool-executions/",
                    params={"session_id": "s2", "tool_name": "get_weather"},
                )
            )
        )
        assert executions["results"][0]["arguments"] == {"city": "Paris", "unit": "fahrenheit"}
        traces = await eventually(lambda: _flushed_traces(client, "s2"))
        detail = (await client.get(f"/traces/{traces['results'][0]['trace_id']}/")).json()
        assert any(span["name"] == "execute_tool get_weather" for span in detail["spans"])

        # The follower saw every event of s1 as it was stored, in order.
        stored = (await client.get("/sessions/s1/events/")).json()["results"]
        assert await eventually(lambda: len(followed) >= len(stored), timeout=30)
        follower.cancel()
        assert [m.data["version"] for m in followed] == [e["version"] for e in stored]
        assert [m.data["event"]["id"] for m in followed] == [e["event"]["id"] for e in stored]
        assert len(stored) == 4  # two turns of a user message and an answer


async def _json(response_coroutine) -> dict | None:
    body = (await response_coroutine).json()
    return body if body.get("results") else None


async def _flushed_traces(client: httpx.AsyncClient, session_id: str) -> dict | None:
    await asyncio.to_thread(trace.get_tracer_provider().force_flush)
    return await _json(client.get(f"/sessions/{session_id}/traces/"))


def test_runs_are_refused_before_anything_runs_or_is_stored(weather_app):
    url = "/api/v1/apps/weather/users/ada/sessions/s1/run/"
    api = client_for("weather")

    assert api.post(url, {"message": "   "}, format="json").status_code == 400
    assert api.post(url, {}, format="json").status_code == 400
    assert (
        api.post(
            url, {"message": "hi", "content": {"role": "user", "parts": [{"text": "hi"}]}}, format="json"
        ).status_code
        == 400
    )
    assert api.post(url, {"content": {"role": "model", "parts": [{"text": "hi"}]}}, format="json").status_code == 400
    assert api.post(url, {"content": {"role": "user", "parts": "nope"}}, format="json").status_code == 400
    assert api.post(url, {"message": "x" * 40_000}, format="json").status_code == 400
    assert api.post(url, '{"message": ', content_type="application/json").status_code == 400
    assert api.post(url, {"message": "hi", "extra": 1}, format="json").status_code == 400
    assert client_for("weather", read_only=True).post(url, {"message": "hi"}, format="json").status_code == 403
    assert client_for("weather", user_id="bob").post(url, {"message": "hi"}, format="json").status_code == 404
    assert client_for("shop").post(url, {"message": "hi"}, format="json").status_code == 404
    unknown = client_for("nope").post(url.replace("/weather/", "/nope/"), {"message": "hi"}, format="json")
    assert unknown.status_code == 404 and "No agent is registered" in unknown.json()["error"]["message"]
    assert Session.objects.count() == 0


GATE = threading.Event()


class SlowModel(BaseLlm):
    """Answers once the test opens ``GATE``: a turn that is busy for as long as the test needs."""

    model: str = "slow"

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False):
        await asyncio.to_thread(GATE.wait, 60)
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="slow answer")]))


def slow_runner() -> Runner:
    return runner_for(LlmAgent(name="slow", model=SlowModel()), app_name="slow", memory="off")


async def test_a_second_turn_on_a_busy_session_is_refused_before_anything_is_stored(asgi_server, settings):
    settings.COGNIZES_AGENTS = {"slow": "tests.runtime.test_http.slow_runner"}
    forget_runners()
    GATE.clear()
    base = f"{asgi_server}/api/v1/apps/slow/users/ada/sessions/s1"
    async with httpx.AsyncClient(headers=await _key("slow"), timeout=60) as client:
        first = asyncio.create_task(client.post(f"{base}/run/", json={"message": "one"}))
        assert await eventually(_stored_in_s1, timeout=30), "the first turn did not start"

        second = await client.post(f"{base}/run/", json={"message": "two"})
        streamed = await client.post(f"{base}/run/stream/", json={"message": "three"})
        assert (second.status_code, streamed.status_code) == (409, 409)
        assert "Another turn of this session is running" in second.json()["error"]["message"]

        GATE.set()
        assert (await first).status_code == 200
        assert await _stored_in_s1() == 2  # the first turn's message and answer, nothing of the refused ones
        assert (await client.post(f"{base}/run/", json={"message": "four"})).status_code == 200
    forget_runners()


async def test_a_streamed_turn_finishes_even_when_its_client_leaves(asgi_server, settings):
    settings.COGNIZES_AGENTS = {"slow": "tests.runtime.test_http.slow_runner"}
    forget_runners()
    GATE.clear()
    base = f"{asgi_server}/api/v1/apps/slow/users/ada/sessions/s1"
    async with httpx.AsyncClient(headers=await _key("slow"), timeout=60) as client:
        async with client.stream("POST", f"{base}/run/stream/", json={"message": "one"}) as response:
            assert response.status_code == 200
            assert await eventually(_stored_in_s1, timeout=30), "the turn did not start"
        # The client has hung up mid-turn: the turn goes on, and holds the session until it ends.
        await asyncio.sleep(1)  # the server has seen the disconnect
        busy = await client.post(f"{base}/run/", json={"message": "too early"})
        assert busy.status_code == 409
        GATE.set()  # the model answers
        assert await eventually(lambda: _stored_is(2), timeout=30), "the turn was cut off"
        assert (await client.post(f"{base}/run/", json={"message": "two"})).status_code == 200  # claim released
    forget_runners()


async def _stored_in_s1() -> int:
    return await run_in_db_thread(lambda: Event.objects.filter(session__session_id="s1").count())


async def _stored_is(count: int) -> bool:
    return await _stored_in_s1() == count


class BrokenModel(BaseLlm):
    """A model whose service is down."""

    model: str = "broken"

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False):
        raise RuntimeError("the model service is unreachable")
        yield  # an async generator, like every model


def broken_runner() -> Runner:
    return runner_for(LlmAgent(name="broken", model=BrokenModel()), app_name="broken", memory="off")


async def test_a_failing_agent_is_a_clear_error_and_frees_the_session(asgi_server, settings):
    settings.COGNIZES_AGENTS = {"broken": "tests.runtime.test_http.broken_runner"}
    forget_runners()
    base = f"{asgi_server}/api/v1/apps/broken/users/ada/sessions/s1"
    async with httpx.AsyncClient(headers=await _key("broken"), timeout=60) as client:
        whole = await client.post(f"{base}/run/", json={"message": "hello"})
        async with client.stream("POST", f"{base}/run/stream/", json={"message": "hello again"}) as response:
            streamed = [m async for m in messages(response)]

    assert whole.status_code == 502
    assert whole.json()["error"]["message"] == "The agent failed: RuntimeError: the model service is unreachable"
    assert streamed[-1].event == "error" and streamed[-1].data["error"]["code"] == "agent_failed"
    forget_runners()

"""Following a session over Server-Sent Events: every event, in order, whichever process stores it."""

from __future__ import annotations

import asyncio
import textwrap

import httpx
import pytest

from cognizes.access.services import do_create_api_key
from cognizes.adk import PostgresSessionService
from cognizes.infra.db_threads import run_in_db_thread
from tests.polling import eventually
from tests.processes import run_python
from tests.sessions.test_contract import text_event
from tests.sse import messages

pytestmark = pytest.mark.django_db(transaction=True)

APP = "live_app"


async def _key(**kwargs) -> dict[str, str]:
    _, key = await run_in_db_thread(do_create_api_key, name="follower", app_name=kwargs.pop("app_name", APP), **kwargs)
    return {"Authorization": f"Bearer {key}"}


def _stream_url(base: str, session_id: str, user_id: str = "ada") -> str:
    return f"{base}/api/v1/apps/{APP}/users/{user_id}/sessions/{session_id}/events/stream/"


async def _collect(
    base: str, session_id: str, headers: dict[str, str], count: int, received: list | None = None, **params
) -> list:
    """The first ``count`` messages (fewer if the stream ends), also appended to ``received`` as they come."""
    received = [] if received is None else received
    async with (
        httpx.AsyncClient(timeout=60) as client,
        client.stream("GET", _stream_url(base, session_id), headers=headers, params=params) as response,
    ):
        assert response.status_code == 200, await response.aread()
        assert response.headers["content-type"].startswith("text/event-stream")
        async for message in messages(response):
            received.append(message)
            if len(received) == count:
                return received
    return received


async def test_a_follower_gets_every_event_in_order_from_this_and_another_process(asgi_server):
    service = PostgresSessionService()
    session = await service.create_session(app_name=APP, user_id="ada", session_id="s1")
    await service.append_event(session, text_event("before anyone followed"))
    headers = await _key()

    follower = asyncio.create_task(_collect(asgi_server, "s1", headers, count=6))
    await asyncio.sleep(0.5)  # the follower is listening by now (or will catch up from the table)
    for i in range(3):
        await service.append_event(session, text_event(f"here {i}"))
    other_process = textwrap.dedent(
        """
        import asyncio
        from cognizes.adk import PostgresSessionService
        from tests.sessions.test_contract import text_event

        async def main():
            service = PostgresSessionService()
            session = await service.get_session(app_name="live_app", user_id="ada", session_id="s1")
            for i in range(2):
                await service.append_event(session, text_event(f"there {i}"))

        asyncio.run(main())
        """
    )
    await asyncio.to_thread(run_python, other_process)

    received = await asyncio.wait_for(follower, 60)
    assert [m.event for m in received] == ["event"] * 6
    assert [m.id for m in received] == ["2", "3", "4", "5", "6", "7"]  # version 1: the creation
    assert [m.data["event"]["content"]["parts"][0]["text"] for m in received] == [
        "before anyone followed",
        "here 0",
        "here 1",
        "here 2",
        "there 0",
        "there 1",
    ]


async def test_a_reconnecting_client_resumes_after_its_last_event_id(asgi_server):
    service = PostgresSessionService()
    session = await service.create_session(app_name=APP, user_id="ada", session_id="s2")
    for i in range(4):
        await service.append_event(session, text_event(f"m{i}"))
    headers = await _key()

    # The header wins over the URL's after_version, which a reconnecting EventSource repeats.
    by_header = await _collect(asgi_server, "s2", {**headers, "Last-Event-ID": "3"}, count=2, after_version=1)
    by_parameter = await _collect(asgi_server, "s2", headers, count=1, after_version=4)

    assert [m.data["event"]["content"]["parts"][0]["text"] for m in by_header] == ["m2", "m3"]
    assert [m.id for m in by_parameter] == ["5"]


async def test_the_stream_ends_when_the_session_is_deleted(asgi_server):
    service = PostgresSessionService()
    session = await service.create_session(app_name=APP, user_id="ada", session_id="s3")
    await service.append_event(session, text_event("only"))
    headers = await _key()

    received: list = []
    follower = asyncio.create_task(_collect(asgi_server, "s3", headers, count=99, received=received))
    await eventually(lambda: received or follower.done(), timeout=30, interval=0.05)  # following
    await service.delete_session(app_name=APP, user_id="ada", session_id="s3")

    received = await asyncio.wait_for(follower, 30)
    assert [m.id for m in received] == ["2"]


async def test_other_tenants_and_bad_input_get_an_error_not_a_stream(asgi_server):
    service = PostgresSessionService()
    await service.create_session(app_name=APP, user_id="ada", session_id="s4")
    async with httpx.AsyncClient(timeout=30) as client:
        other_app = await client.get(_stream_url(asgi_server, "s4"), headers=await _key(app_name="other_app"))
        other_user = await client.get(_stream_url(asgi_server, "s4"), headers=await _key(user_id="bob"))
        missing = await client.get(_stream_url(asgi_server, "nope"), headers=await _key())
        anonymous = await client.get(_stream_url(asgi_server, "s4"))
        bad_resume = await client.get(_stream_url(asgi_server, "s4"), headers={**await _key(), "Last-Event-ID": "x"})

    assert (other_app.status_code, other_user.status_code, missing.status_code) == (404, 404, 404)
    assert anonymous.status_code in (401, 403)
    assert bad_resume.status_code == 400

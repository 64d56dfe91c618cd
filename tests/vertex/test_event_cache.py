"""Listed events are rendered once per process (vertex_app.event_cache), yet always answer the rows as they are.

ADK's Vertex client lists a session's every event at every turn; the server keeps
each SessionEvent it rendered. What a user must never see is an answer that is
not the database's: another spelling's names, another tenant's events, a row as
it was before it changed.
"""

from __future__ import annotations

import json
import time

import httpx
import pytest
from django.db import connection

from cognizes.access.renderers import FastJSONRenderer
from sessions_app import services
from sessions_app.services import StoredEventText
from tests.vertex.conftest import APP
from vertex_app.event_cache import EventResources
from vertex_app.sessions import event_resource

pytestmark = pytest.mark.django_db(transaction=True)


def client(server, key: str | None = None, *, project: bool = False) -> httpx.Client:
    prefix = "projects/p/locations/us-central1/" if project else ""
    return httpx.Client(
        base_url=f"{server.base_url}v1beta1/{prefix}reasoningEngines/{server.engine_id}/",
        headers={"x-goog-api-key": key or server.key},
    )


def append(http: httpx.Client, session_id: str, text: str) -> None:
    response = http.post(
        f"sessions/{session_id}:appendEvent",
        json={"author": "user", "invocationId": "i1", "content": {"role": "user", "parts": [{"text": text}]}},
    )
    assert response.status_code == 200, response.text


def texts(http: httpx.Client, session_id: str) -> list[str]:
    response = http.get(f"sessions/{session_id}/events")
    assert response.status_code == 200, response.text
    return [event["content"]["parts"][0]["text"] for event in response.json()["sessionEvents"]]


def test_a_row_changed_in_place_is_listed_as_it_is_now(server):
    """Events are never rewritten by Cognizes, but an operator may (or a database may be restored): the
    rendered event kept from the last listing is not answered once the row differs."""
    with client(server) as http:
        assert http.post("sessions?sessionId=s1", json={"userId": "alice"}).status_code == 200
        append(http, "s1", "before 你好")
        assert texts(http, "s1") == ["before 你好"]
        assert texts(http, "s1") == ["before 你好"]  # now served from what was kept

        with connection.cursor() as cursor:
            cursor.execute("UPDATE events SET data = jsonb_set(data, '{content,parts,0,text}', '\"après привет\"')")

        assert texts(http, "s1") == ["après привет"]
        assert http.get("sessions/s1/events").json()["sessionEvents"][0]["rawEvent"]["content"]["parts"] == [
            {"text": "après привет"}
        ]


def test_each_spelling_of_the_engine_gets_its_own_names(server):
    with client(server) as express, client(server, project=True) as project:
        assert express.post("sessions?sessionId=s1", json={"userId": "alice"}).status_code == 200
        append(express, "s1", "hello")
        for _ in range(2):
            (by_express,) = express.get("sessions/s1/events").json()["sessionEvents"]
            (by_project,) = project.get("sessions/s1/events").json()["sessionEvents"]
            assert by_express["name"].startswith(f"reasoningEngines/{server.engine_id}/sessions/s1/events/")
            assert by_project["name"] == "projects/p/locations/us-central1/" + by_express["name"]
            assert {k: v for k, v in by_project.items() if k != "name"} == {
                k: v for k, v in by_express.items() if k != "name"
            }


def test_users_with_the_same_session_id_each_list_their_own_events(server):
    """Same engine, same session id, same URL, same event versions: only the session row tells them apart."""
    for user in ("alice", "bob"):
        services.do_create_session(
            app_name=APP, user_id=user, session_id="shared", delta=services.StateDelta(), now=time.time()
        )
    with client(server, server.key_for(user_id="alice")) as alice, client(server, server.key_for(user_id="bob")) as bob:
        append(alice, "shared", "alice's secret")
        append(bob, "shared", "bob's secret")
        for _ in range(2):
            assert texts(alice, "shared") == ["alice's secret"]
            assert texts(bob, "shared") == ["bob's secret"]


NAME = "reasoningEngines/1/sessions/s"


def stored(version: int, text: str, raw: dict | None = None) -> StoredEventText:
    """An event as find_event_page reads it: its JSON text as PostgreSQL writes jsonb."""
    data = {
        "id": f"e{version}",
        "author": "user",
        "timestamp": 1796032800.25 + version,
        "content": {"role": "user", "parts": [{"text": text}]},
    }
    return StoredEventText(version, json.dumps(data, ensure_ascii=False), raw and json.dumps(raw))


def render(event: StoredEventText) -> dict:
    return event_resource(NAME, event.decoded())


def size(version: int, text: str) -> int:
    return len(FastJSONRenderer().render(render(stored(version, text))))


def test_the_cache_keeps_at_most_its_bytes_the_least_recently_served_going_first():
    cache = EventResources(max_bytes=size(1, "a") + size(2, "b") + 5)
    first = cache.resource(1, NAME, stored(1, "a"), event_resource)
    cache.resource(1, NAME, stored(2, "b"), event_resource)
    assert cache.resource(1, NAME, stored(1, "a"), event_resource) is first  # served again: now the most recent
    cache.resource(1, NAME, stored(3, "c"), event_resource)  # version 2 goes

    assert len(cache) == 2 and cache.bytes <= cache.max_bytes
    assert cache.resource(1, NAME, stored(1, "a"), event_resource) is first
    assert cache.resource(1, NAME, stored(2, "b"), event_resource) == render(stored(2, "b"))


def test_an_event_larger_than_the_whole_cache_is_served_not_kept():
    cache = EventResources(max_bytes=size(1, "small") + 5)
    cache.resource(1, NAME, stored(1, "small"), event_resource)
    huge = stored(2, "长" * 10_000)
    assert cache.resource(1, NAME, huge, event_resource) == render(huge)
    assert len(cache) == 1 and cache.bytes == size(1, "small")


def test_what_the_cache_answers_is_what_rendering_gives_and_zero_bytes_keeps_nothing():
    cache, off = EventResources(max_bytes=10_000), EventResources(max_bytes=0)
    for version, text in ((1, "héllo"), (1, "changed"), (2, "こんにちは")):
        event = stored(version, text)
        assert cache.resource(7, NAME, event, event_resource) == render(event)
        assert off.resource(7, NAME, event, event_resource) == render(event)
    assert len(cache) == 2 and len(off) == 0
    verbatim = stored(1, "changed", raw={"verbatim": True})  # the same data, now with a verbatim rawEvent
    assert cache.resource(7, NAME, verbatim, event_resource)["rawEvent"] == {"verbatim": True}

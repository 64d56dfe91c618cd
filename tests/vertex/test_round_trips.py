"""A Vertex get makes no more round trips to PostgreSQL than the native get (issue 29 goal 2).

ADK's ``VertexAiSessionService.get_session`` sends GetSession and ListEvents at once; the native API
answers the session with its events in one request of two queries. GetSession finds the session by
its id and reads it in one statement, ListEvents finds it and reads the page in one: two in all.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from cognizes.access.services import do_create_api_key
from vertex_app.services import do_get_or_create_engine

pytestmark = pytest.mark.django_db

APP, USER = "round_trips", "ada"


@pytest.fixture
def vertex(client):
    engine = do_get_or_create_engine(app_name=APP)
    _, key = do_create_api_key(name="t", app_name=APP)
    base = f"/v1beta1/reasoningEngines/{engine.engine_id}/sessions"
    headers = {"HTTP_X_GOOG_API_KEY": key, "SERVER_NAME": "127.0.0.1"}
    response = client.post(
        f"{base}?sessionId=s1", {"userId": USER, "sessionState": {"a": 1}}, content_type="application/json", **headers
    )
    assert response.status_code == 200, response.content
    for turn in range(3):
        response = client.post(
            f"{base}/s1:appendEvent",
            {
                "author": "user",
                "invocationId": f"i{turn}",
                "content": {"role": "user", "parts": [{"text": f"message {turn} — 日本語"}]},
            },
            content_type="application/json",
            **headers,
        )
        assert response.status_code == 200, response.content
    return client, base + "/s1", headers, key


def queries(client, url: str, headers: dict) -> list[str]:
    """The statements a GET sends for the session and its events (the key and the engine are remembered
    across requests by their caches, which a test's open transaction keeps from filling: not counted)."""
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url, **headers)
    assert response.status_code == 200, response.content
    return [
        query["sql"] for query in captured if "api_keys" not in query["sql"] and "vertex_engines" not in query["sql"]
    ]


def test_get_session_is_one_query(vertex):
    client, session, headers, _ = vertex
    assert len(queries(client, session, headers)) == 1


def test_list_events_is_one_query_and_still_pages(vertex):
    client, session, headers, _ = vertex
    assert len(queries(client, session + "/events", headers)) == 1

    first = client.get(session + "/events?pageSize=2", **headers).json()
    rest = client.get(f"{session}/events?pageSize=2&pageToken={first['nextPageToken']}", **headers).json()
    texts = [event["content"]["parts"][0]["text"] for event in first["sessionEvents"] + rest["sessionEvents"]]
    assert texts == [f"message {turn} — 日本語" for turn in range(3)] and "nextPageToken" not in rest


def test_a_vertex_get_makes_no_more_round_trips_than_the_native_get(vertex):
    client, session, headers, key = vertex
    native = queries(
        client,
        f"/api/v1/apps/{APP}/users/{USER}/sessions/s1/",
        {"HTTP_AUTHORIZATION": f"Bearer {key}", "SERVER_NAME": "127.0.0.1"},
    )
    vertex_get = queries(client, session, headers) + queries(client, session + "/events", headers)
    assert len(vertex_get) <= len(native)


def test_list_events_of_an_id_two_users_have_is_refused_without_an_event(vertex):
    client, session, headers, _ = vertex
    created = client.post(
        f"/api/v1/apps/{APP}/users/bob/sessions/",
        {"id": "s1"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {vertex[3]}",
        SERVER_NAME="127.0.0.1",
    )
    assert created.status_code == 201, created.content

    response = client.get(session + "/events", **headers)
    assert response.status_code == 400 and response.json()["error"]["status"] == "FAILED_PRECONDITION"
    assert "sessionEvents" not in response.json()

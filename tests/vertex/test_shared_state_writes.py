"""A key of one user never writes ``app:`` state, on any surface (issue 41 G); an app-wide key still does.

App state is merged into every user's sessions: had bob's key set ``app:banner``,
every other user of the app would read it. Each path that takes state from a
caller (native create, append and run; Vertex create and appendEvent over REST
and gRPC; the deployed agent's ``:query`` create_session) answers 400 naming
the prefix, and nothing is stored.
"""

from __future__ import annotations

import datetime
import json

import grpc
import httpx
import pytest
from google.api_core import exceptions
from google.cloud.aiplatform_v1beta1.types import Session as GoogleSession
from google.cloud.aiplatform_v1beta1.types import SessionEvent
from google.protobuf import struct_pb2

from cognizes.access.services import do_create_api_key
from demo_agents.weather.tools import register
from runtime_app.agents import forget_runners
from sessions_app.models import AppState, Event, Session
from tests.api.conftest import client_for
from tests.vertex.conftest import APP
from vertex_app.services import do_get_or_create_engine

BOB = "/api/v1/apps/shop/users/bob"
EVENT = {"author": "user", "actions": {"state_delta": {"app:banner": "pwned", "user:lang": "fr"}}}


def _refused(response) -> None:
    assert response.status_code == 400, response.content
    assert "'app:'" in response.content.decode() and "app:banner" in response.content.decode()


@pytest.mark.django_db
def test_native_create_and_append_by_a_user_key_refuse_app_state_and_store_nothing():
    bob = client_for("shop", user_id="bob")

    _refused(bob.post(f"{BOB}/sessions/", {"id": "b1", "state": {"app:banner": "pwned"}}, format="json"))
    assert not Session.objects.exists()
    bob.post(f"{BOB}/sessions/", {"id": "b2", "state": {"user:lang": "fr", "k": 1}}, format="json")
    _refused(bob.post(f"{BOB}/sessions/b2/events/", {"event": EVENT, "expected_version": 1}, format="json"))

    assert not AppState.objects.exists() and not Event.objects.exists()
    assert (
        client_for("shop", user_id="ada")
        .post("/api/v1/apps/shop/users/ada/sessions/", {"id": "a1"}, format="json")
        .json()["state"]
        == {}
    )


@pytest.mark.django_db
def test_an_app_wide_key_still_writes_app_state_on_create_and_append():
    app = client_for("shop")

    made = app.post(f"{BOB}/sessions/", {"id": "b1", "state": {"app:banner": "hello"}}, format="json")
    appended = app.post(f"{BOB}/sessions/b1/events/", {"event": EVENT, "expected_version": 1}, format="json")

    assert (made.status_code, appended.status_code) == (201, 201)
    assert AppState.objects.get(app_name="shop").state == {"banner": "pwned"}


@pytest.mark.django_db
def test_the_run_api_refuses_a_user_keys_app_state_delta_before_running():
    register()
    forget_runners()
    try:
        bob = client_for("weather", user_id="bob")
        response = bob.post(
            "/api/v1/apps/weather/users/bob/sessions/s1/run/",
            {"message": "hi", "state_delta": {"app:banner": "pwned"}},
            format="json",
        )
    finally:
        forget_runners()
    _refused(response)
    assert not Session.objects.exists() and not AppState.objects.exists()


def _vertex(server, key: str) -> httpx.Client:
    return httpx.Client(
        base_url=f"{server.base_url}v1beta1/reasoningEngines/{server.engine_id}/", headers={"x-goog-api-key": key}
    )


@pytest.mark.django_db(transaction=True)
def test_vertex_create_and_append_by_a_user_key_refuse_app_state(server):
    bob = server.key_for(user_id="bob")
    with _vertex(server, bob) as http:
        created = http.post("sessions?sessionId=b1", json={"userId": "bob", "sessionState": {"app:banner": "pwned"}})
        assert http.post("sessions?sessionId=b2", json={"userId": "bob"}).status_code == 200
        appended = http.post(
            "sessions/b2:appendEvent",
            json={
                "author": "user",
                "invocationId": "i",
                "timestamp": "2026-12-04T00:00:00Z",
                "actions": {"stateDelta": {"app:banner": "pwned"}},
            },
        )

    for response in (created, appended):
        _refused(response)
        assert response.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert list(Session.objects.values_list("session_id", flat=True)) == ["b2"]
    assert not AppState.objects.exists() and not Event.objects.exists()
    with _vertex(server, server.key) as http:  # the app's own key may
        assert (
            http.post("sessions?sessionId=a1", json={"userId": "ada", "sessionState": {"app:banner": "hi"}}).status_code
            == 200
        )
    assert AppState.objects.get(app_name=APP).state == {"banner": "hi"}


def _grpc_event(delta: dict) -> SessionEvent:
    state = struct_pb2.Struct()
    state.update(delta)
    return SessionEvent(
        author="user",
        invocation_id="inv-1",
        timestamp=datetime.datetime.now(datetime.UTC),
        actions={"state_delta": state},
    )


@pytest.mark.django_db(transaction=True)
def test_grpc_create_and_append_by_a_user_key_are_invalid_argument(grpc_server):
    bob = do_create_api_key(name="bob", app_name=APP, user_id="bob")[1]
    client, meta = grpc_server.sessions(grpc_server.channel(bob)), grpc_server.metadata(bob)

    with pytest.raises(exceptions.InvalidArgument) as created:
        client.create_session(
            request={
                "parent": grpc_server.engine,
                "session": GoogleSession(user_id="bob", session_state={"app:banner": "pwned"}),
            },
            metadata=meta,
        )
    client.create_session(
        request={"parent": grpc_server.engine, "session_id": "b2", "session": GoogleSession(user_id="bob")},
        metadata=meta,
    )
    with pytest.raises(exceptions.InvalidArgument) as appended:
        client.append_event(
            name=f"{grpc_server.engine}/sessions/b2", event=_grpc_event({"app:banner": "pwned"}), metadata=meta
        )

    for refused in (created, appended):
        assert refused.value.grpc_status_code == grpc.StatusCode.INVALID_ARGUMENT
        assert "'app:'" in refused.value.message
    assert not AppState.objects.exists() and not Event.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_query_create_session_by_a_user_key_refuses_app_state(asgi_server):
    register()
    forget_runners()
    engine = do_get_or_create_engine(app_name="weather").engine_id
    url = f"{asgi_server}/v1beta1/reasoningEngines/{engine}:query"
    bob = do_create_api_key(name="bob", app_name="weather", user_id="bob")[1]
    app = do_create_api_key(name="app", app_name="weather")[1]
    body = {"classMethod": "create_session", "input": {"user_id": "bob", "state": {"app:banner": "pwned"}}}
    try:
        refused = httpx.post(url, json=body, headers={"x-goog-api-key": bob}, timeout=60)
        assert not Session.objects.exists() and not AppState.objects.exists()
        allowed = httpx.post(url, json=body, headers={"x-goog-api-key": app}, timeout=60)
    finally:
        forget_runners()

    _refused(refused)
    assert refused.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert allowed.status_code == 200 and AppState.objects.get(app_name="weather").state == {"banner": "pwned"}


@pytest.mark.django_db(transaction=True)
def test_a_turn_seeded_with_events_that_set_app_state_is_refused_for_a_user_key(asgi_server):
    """``streaming_agent_run_with_events`` and ``async_stream_query`` seed a new session with the caller's events."""
    register()
    forget_runners()
    engine = do_get_or_create_engine(app_name="weather").engine_id
    url = f"{asgi_server}/v1beta1/reasoningEngines/{engine}:streamQuery?alt=sse"
    bob = do_create_api_key(name="bob", app_name="weather", user_id="bob")[1]
    seeded = [{"author": "user", "actions": {"state_delta": {"app:banner": "pwned"}}}]
    envelope = json.dumps({"user_id": "bob", "message": {"role": "user", "parts": [{"text": "hi"}]}, "events": seeded})
    bodies = [
        {"classMethod": "streaming_agent_run_with_events", "input": {"request_json": envelope}},
        {"classMethod": "async_stream_query", "input": {"user_id": "bob", "message": "hi", "session_events": seeded}},
    ]
    try:
        answers = [httpx.post(url, json=body, headers={"x-goog-api-key": bob}, timeout=60) for body in bodies]
    finally:
        forget_runners()

    for answer in answers:
        _refused(answer)
    assert not Session.objects.exists() and not AppState.objects.exists()

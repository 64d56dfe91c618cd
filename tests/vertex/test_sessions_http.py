"""The Vertex sessions surface over plain HTTP: refusals in Google's shape, filters, paging, shared state."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest

from cognizes.adk import PostgresSessionService
from sessions_app.models import Event as StoredEvent
from sessions_app.models import Session
from tests.vertex.conftest import APP

pytestmark = pytest.mark.django_db(transaction=True)


def client(server, key: str | None = None) -> httpx.Client:
    headers = {"x-goog-api-key": key or server.key} if key != "" else {}
    return httpx.Client(base_url=f"{server.base_url}v1beta1/reasoningEngines/{server.engine_id}/", headers=headers)


@pytest.fixture
def http(server) -> httpx.Client:
    with client(server) as c:
        yield c


def create(http: httpx.Client, user: str, session_id: str, **body) -> dict:
    response = http.post(f"sessions?sessionId={session_id}", json={"userId": user, **body})
    assert response.status_code == 200, response.text
    return response.json()


def test_create_answers_a_finished_operation_whose_response_names_the_session(server, http):
    operation = create(http, "alice", "s1", sessionState={"a": 1}, displayName="first", labels={"team": "x"})

    assert operation["done"] is True
    assert operation["name"].startswith(f"reasoningEngines/{server.engine_id}/sessions/s1/operations/")
    session = operation["response"]
    assert session["name"] == f"reasoningEngines/{server.engine_id}/sessions/s1"
    assert (session["userId"], session["sessionState"], session["displayName"], session["labels"]) == (
        "alice",
        {"a": 1},
        "first",
        {"team": "x"},
    )
    polled = http.get(operation["name"].split("/", 2)[2]).json()  # the operation, by the name returned
    assert polled["done"] is True and polled["response"]["name"] == session["name"]


def test_project_mode_paths_reach_the_same_sessions_and_names_keep_their_prefix(server, http):
    create(http, "alice", "s1")
    prefix = f"projects/p1/locations/europe-west1/reasoningEngines/{server.engine_id}"
    response = httpx.get(
        f"{server.base_url}v1beta1/{prefix}/sessions/s1", headers={"Authorization": f"Bearer {server.key}"}
    )

    assert response.status_code == 200
    assert response.json()["name"] == f"{prefix}/sessions/s1"
    ga = httpx.get(f"{server.base_url}v1/{prefix}/sessions/s1", headers={"Authorization": f"Bearer {server.key}"})
    assert ga.status_code == 200  # clients set to the GA version (v1) reach the same surface


@pytest.mark.parametrize(
    ("headers", "status", "google_status"),
    [
        ({}, 401, "UNAUTHENTICATED"),
        ({"x-goog-api-key": "cgz_00000000_wrong"}, 401, "UNAUTHENTICATED"),
        ({"Authorization": "Bearer cgz_00000000_wrong"}, 401, "UNAUTHENTICATED"),
    ],
)
def test_a_missing_or_unknown_key_is_refused_in_googles_shape(server, headers, status, google_status):
    response = httpx.get(f"{server.base_url}v1beta1/reasoningEngines/{server.engine_id}/sessions", headers=headers)

    assert response.status_code == status
    assert response.json()["error"]["status"] == google_status
    assert response.json()["error"]["code"] == status


def test_another_apps_key_and_an_unknown_engine_get_the_same_404(server, http):
    create(http, "alice", "s1")
    with client(server, server.key_for(app_name="other_app")) as other:
        for path in ("sessions", "sessions/s1", "sessions/s1/events"):
            response = other.get(path)
            assert response.status_code == 404, path
            assert response.json()["error"]["status"] == "NOT_FOUND"
        assert other.post("sessions/s1:appendEvent", json={"author": "user"}).status_code == 404
        assert other.delete("sessions/s1").status_code == 404
    unknown = httpx.get(
        f"{server.base_url}v1beta1/reasoningEngines/123/sessions", headers={"x-goog-api-key": server.key}
    )
    assert unknown.status_code == 404
    assert Session.objects.filter(session_id="s1").exists()


def test_a_key_of_one_user_sees_and_lists_only_that_users_sessions(server, http):
    create(http, "alice", "a1")
    create(http, "bob", "b1")
    with client(server, server.key_for(user_id="alice")) as alice:
        assert alice.get("sessions/a1").status_code == 200
        assert alice.get("sessions/b1").status_code == 404
        assert [s["userId"] for s in alice.get("sessions").json()["sessions"]] == ["alice"]
        assert alice.get("sessions", params={"filter": 'user_id="bob"'}).json() == {"sessions": []}
        assert alice.post("sessions", json={"userId": "bob"}).status_code == 404


def test_a_read_only_key_reads_but_cannot_write(server, http):
    create(http, "alice", "s1")
    with client(server, server.key_for(read_only=True)) as reader:
        assert reader.get("sessions/s1").status_code == 200
        assert reader.get("sessions/s1/events").status_code == 200
        for response in (
            reader.post("sessions", json={"userId": "alice"}),
            reader.post("sessions/s1:appendEvent", json={"author": "user"}),
            reader.patch("sessions/s1", json={"displayName": "x"}),
            reader.delete("sessions/s1"),
        ):
            assert response.status_code == 403
            assert response.json()["error"]["status"] == "PERMISSION_DENIED"
    assert Session.objects.count() == 1 and StoredEvent.objects.count() == 0


@pytest.mark.parametrize(
    "body",
    [
        "not json",
        "[1, 2]",
        json.dumps({"userId": "alice", "unknownField": 1}),
        json.dumps({"userId": 7}),
        json.dumps({"sessionState": {"a": 1}}),
        json.dumps({"userId": "alice", "sessionState": [1]}),
        json.dumps({"userId": "alice", "ttl": "forever"}),
        json.dumps({"userId": "alice", "ttl": "60s", "expireTime": "2030-01-01T00:00:00Z"}),
        json.dumps({"userId": "alice", "labels": {"a": 1}}),
    ],
)
def test_malformed_creates_get_400_and_store_nothing(http, body):
    response = http.post("sessions", content=body, headers={"Content-Type": "application/json"})

    assert response.status_code == 400, response.text
    assert response.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert Session.objects.count() == 0


def test_session_ids_are_unique_per_engine_as_in_vertex(http):
    create(http, "alice", "s1")

    response = http.post("sessions?sessionId=s1", json={"userId": "bob"})

    assert response.status_code == 409 and response.json()["error"]["status"] == "ALREADY_EXISTS"
    assert http.post("sessions?sessionId=bad/id", json={"userId": "bob"}).status_code == 400


def test_append_routes_state_by_prefix_and_trims_temp_keys(server, http):
    create(http, "alice", "s1")
    create(http, "alice", "s2")
    body = {
        "author": "user",
        "invocationId": "i1",
        "timestamp": "2026-11-30T10:00:00Z",
        "content": {"role": "user", "parts": [{"text": "hello"}]},
        "actions": {"state_delta": {"k": 1, "user:lang": "fr", "app:mode": "x", "temp:t": 1}},
    }

    assert http.post("sessions/s1:appendEvent", json=body).json() == {}

    s1, s2 = http.get("sessions/s1").json(), http.get("sessions/s2").json()
    assert s1["sessionState"] == {"k": 1, "user:lang": "fr", "app:mode": "x"}
    assert s2["sessionState"] == {"user:lang": "fr", "app:mode": "x"}
    assert s1["updateTime"] == "2026-11-30T10:00:00.000000Z"
    (event,) = http.get("sessions/s1/events").json()["sessionEvents"]
    assert event["author"] == "user" and event["content"]["parts"] == [{"text": "hello"}]
    assert event["actions"]["stateDelta"] == {"k": 1, "user:lang": "fr", "app:mode": "x"}
    assert event["name"].startswith(f"reasoningEngines/{server.engine_id}/sessions/s1/events/")


def test_an_event_without_raw_event_is_rebuilt_from_the_named_fields(http):
    """What clients other than ADK Python send (agentplatform's events.append, ADK-Go/Java)."""
    create(http, "alice", "s1")
    http.post(
        "sessions/s1:appendEvent",
        json={
            "author": "agent",
            "invocationId": "i1",
            "timestamp": "2026-11-30T10:00:00.5+00:00",
            "content": {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "f", "args": {"x": 1}}}]},
            "actions": {"transferAgent": "child", "escalate": True},
            "errorCode": "E1",
            "eventMetadata": {
                "branch": "a.b",
                "turnComplete": True,
                "customMetadata": {"trace": "t", "_usage_metadata": {"total_token_count": 7}},
                "longRunningToolIds": ["c1"],
            },
        },
    )

    session = asyncio.run(PostgresSessionService().get_session(app_name=APP, user_id="alice", session_id="s1"))
    (event,) = session.events
    assert event.content.parts[0].function_call.name == "f"
    assert (event.actions.transfer_to_agent, event.actions.escalate, event.error_code) == ("child", True, "E1")
    assert (event.branch, event.turn_complete, event.custom_metadata) == ("a.b", True, {"trace": "t"})
    assert event.long_running_tool_ids == {"c1"} and event.usage_metadata.total_token_count == 7
    assert event.timestamp == 1796032800.5


@pytest.mark.parametrize(
    "body",
    [
        {"invocationId": "i1"},
        {"author": "user", "timestamp": "yesterday"},
        {"author": "user", "actions": {"unknown_action": 1}},
        {"author": "user", "content": {"parts": "not a list"}},
        {"author": "user", "rawEvent": {"content": {"parts": 5}}},
    ],
)
def test_malformed_appends_get_400_and_store_nothing(http, body):
    create(http, "alice", "s1")

    response = http.post("sessions/s1:appendEvent", json=body)

    assert response.status_code == 400, response.text
    assert StoredEvent.objects.count() == 0


def test_concurrent_appends_without_versions_all_land(server, http):
    """Vertex appends carry no version: each is retried at the new one, so none is lost and no key either."""
    create(http, "alice", "s1")

    def append(i: int) -> int:
        with client(server) as own:
            return own.post(
                "sessions/s1:appendEvent",
                json={
                    "author": "user",
                    "timestamp": f"2026-11-30T10:00:{i:02d}Z",
                    "actions": {"state_delta": {f"k{i}": i, f"user:u{i}": i}},
                },
            ).status_code

    async def all_at_once() -> list[int]:
        return await asyncio.gather(*(asyncio.to_thread(append, i) for i in range(12)))

    assert asyncio.run(all_at_once()) == [200] * 12
    state = http.get("sessions/s1").json()["sessionState"]
    assert all(state[f"k{i}"] == i and state[f"user:u{i}"] == i for i in range(12))
    assert StoredEvent.objects.count() == 12


def test_list_filters_by_user_and_pages(http):
    for i in range(5):
        create(http, "alice" if i % 2 else "bob", f"s{i}")

    first = http.get("sessions", params={"pageSize": 2}).json()
    second = http.get("sessions", params={"pageSize": 2, "pageToken": first["nextPageToken"]}).json()
    third = http.get("sessions", params={"pageSize": 2, "pageToken": second["nextPageToken"]}).json()
    names = [s["name"].rsplit("/", 1)[1] for page in (first, second, third) for s in page["sessions"]]
    assert sorted(names) == [f"s{i}" for i in range(5)] and "nextPageToken" not in third
    alices = http.get("sessions", params={"filter": 'userId="alice"'}).json()["sessions"]
    assert {s["userId"] for s in alices} == {"alice"} and len(alices) == 2
    for bad in ('user_id~"a"', 'color="red"', 'user_id="a" OR user_id="b"', '"unterminated'):
        assert http.get("sessions", params={"filter": bad}).status_code == 400, bad
    assert http.get("sessions", params={"pageSize": 10**29}).status_code == 400
    assert http.get("sessions", params={"pageToken": "garbage"}).status_code == 400


def test_events_filter_by_time_and_page(http):
    create(http, "alice", "s1")
    for second in range(5):
        http.post("sessions/s1:appendEvent", json={"author": "user", "timestamp": f"2026-11-30T10:00:0{second}Z"})

    later = http.get("sessions/s1/events", params={"filter": 'timestamp>="2026-11-30T10:00:02+00:00"'}).json()
    assert [e["timestamp"] for e in later["sessionEvents"]] == [f"2026-11-30T10:00:0{s}.000000Z" for s in (2, 3, 4)]
    first = http.get("sessions/s1/events", params={"pageSize": 3}).json()
    rest = http.get("sessions/s1/events", params={"pageSize": 3, "pageToken": first["nextPageToken"]}).json()
    assert len(first["sessionEvents"]) == 3 and len(rest["sessionEvents"]) == 2 and "nextPageToken" not in rest
    assert http.get("sessions/s1/events", params={"filter": 'author="user"'}).status_code == 400


def test_patch_changes_what_the_mask_names(http):
    create(http, "alice", "s1", displayName="old", sessionState={"a": 1})

    patched = http.patch(
        "sessions/s1",
        params={"updateMask": "displayName,session_state"},
        json={"displayName": "new", "sessionState": {"b": 2}, "labels": {"ignored": "x"}},
    )

    assert patched.status_code == 200, patched.text
    assert (patched.json()["displayName"], patched.json()["sessionState"]) == ("new", {"b": 2})
    assert "labels" not in patched.json()
    assert http.patch("sessions/s1", params={"updateMask": "userId"}, json={"userId": "eve"}).status_code == 400
    assert http.patch("sessions/s1", json={"sessionState": {"user:x": 1}}).status_code == 400


def test_delete_answers_an_operation_and_then_404(http):
    create(http, "alice", "s1")

    deleted = http.delete("sessions/s1")

    assert deleted.status_code == 200 and deleted.json()["done"] is True
    assert http.get("sessions/s1").status_code == 404
    assert http.get("sessions/s1").json()["error"]["status"] == "NOT_FOUND"


def test_unknown_paths_and_methods_answer_in_googles_shape(server, http):
    assert http.get("nothing-here").json()["error"]["code"] == 404
    assert http.patch("nothing-here", json={}).json()["error"]["code"] == 404
    assert http.put("sessions/s1", json={}).status_code == 405
    assert http.put("sessions/s1", json={}).json()["error"]["status"] == "METHOD_NOT_ALLOWED"


def test_a_session_with_a_ttl_is_gone_once_it_expires(http):
    create(http, "alice", "brief", ttl="1s")
    create(http, "alice", "lasting")
    assert http.get("sessions/brief").status_code == 200

    time.sleep(1.2)

    assert http.get("sessions/brief").status_code == 404
    assert [s["name"].rsplit("/", 1)[1] for s in http.get("sessions").json()["sessions"]] == ["lasting"]
    assert http.post("sessions/brief:appendEvent", json={"author": "user"}).status_code == 404


def test_raw_event_fields_this_adk_does_not_know_come_back_verbatim(server, http):
    """A client on a newer ADK sends Event fields ours drops: Cognizes keeps its rawEvent as sent."""
    create(http, "alice", "s1")
    raw = {
        "id": "e1",
        "author": "user",
        "invocationId": "i1",
        "timestamp": 1796032800.25,
        "content": {"role": "user", "parts": [{"text": "hi"}]},
        "actions": {"stateDelta": {}},
        "futureField": {"nested": [1, 2]},
    }

    http.post(
        "sessions/s1:appendEvent",
        json={"author": "user", "invocationId": "i1", "timestamp": "2026-11-30T10:00:00.25Z", "rawEvent": raw},
    )

    (event,) = http.get("sessions/s1/events").json()["sessionEvents"]
    assert event["rawEvent"]["futureField"] == {"nested": [1, 2]}
    assert event["rawEvent"]["content"] == raw["content"]


async def test_events_of_this_adk_are_stored_once_not_twice(vertex):
    from google.adk.events.event import Event
    from google.genai import types

    sessions = vertex.sessions()
    session = await sessions.create_session(app_name=APP, user_id="alice")
    await sessions.append_event(
        session,
        Event(author="user", invocation_id="i", content=types.Content(role="user", parts=[types.Part(text="hello")])),
    )

    rows = await asyncio.to_thread(lambda: list(StoredEvent.objects.values_list("raw_event", flat=True)))
    assert rows == [None]  # everything ADK sent is in the stored ADK event


def test_an_id_several_users_share_is_refused_to_an_app_key_and_reached_with_a_users_key(server, http):
    """Session ids are unique per user in Cognizes: a Vertex URL naming one that two users hold is ambiguous."""
    from sessions_app import services

    for user in ("alice", "bob"):  # as the native API or ADK's service can create them
        services.do_create_session(
            app_name=APP, user_id=user, session_id="shared", delta=services.StateDelta(), now=time.time()
        )
    body = {"author": "user", "invocationId": "i1", "actions": {"state_delta": {"user:lang": "fr", "k": 1}}}

    refused = http.post("sessions/shared:appendEvent", json=body)
    assert refused.status_code == 400 and refused.json()["error"]["status"] == "FAILED_PRECONDITION"
    assert StoredEvent.objects.count() == 0
    with client(server, server.key_for(user_id="bob")) as bob:
        assert bob.post("sessions/shared:appendEvent", json=body).status_code == 200
        assert bob.get("sessions/shared").json()["sessionState"] == {"k": 1, "user:lang": "fr"}
    assert StoredEvent.objects.get().session.user_id == "bob"
    assert services.get_user_state(app_name=APP, user_id="alice")[0] == {}


def test_a_read_only_key_is_told_a_missing_session_is_missing(server, http):
    with client(server, server.key_for(read_only=True)) as reader:
        response = reader.post("sessions/nowhere:appendEvent", json={"author": "user"})
    assert response.status_code == 404 and response.json()["error"]["status"] == "NOT_FOUND"


def test_temp_keys_in_a_raw_event_are_not_stored_either(http):
    create(http, "alice", "s1")
    raw = {
        "author": "user",
        "invocationId": "i1",
        "actions": {"stateDelta": {"k": 1, "temp:scratch": "x"}},
        "futureField": 1,
    }  # a field this ADK does not know: the rawEvent is kept as sent

    assert (
        http.post(
            "sessions/s1:appendEvent",
            json={
                "author": "user",
                "invocationId": "i1",
                "actions": {"state_delta": {"k": 1, "temp:scratch": "x"}},
                "rawEvent": raw,
            },
        ).status_code
        == 200
    )

    (event,) = http.get("sessions/s1/events").json()["sessionEvents"]
    assert event["rawEvent"]["futureField"] == 1
    assert event["rawEvent"]["actions"]["stateDelta"] == {"k": 1}
    assert "temp:scratch" not in json.dumps(list(StoredEvent.objects.values_list("data", "raw_event")))

"""What Google's clients send that Vertex takes is taken here too, never refused (the clients drop refusals).

ADK for Java writes timestamps as ``{"seconds", "nanos"}``, polls operations at
the location, and sends event fields Vertex's proto lacks; ADK for Python's memory
names the engine's app by the engine id or its resource name, as Google's docs say.
Each case is what the client library puts on the wire (../shared/adk-go-java-wire.md).
"""

from __future__ import annotations

import time

import httpx
import pytest
from google.adk.events.event import Event

from cognizes.adk import PostgresSessionService
from memory_app.models import ConsolidationJob
from sessions_app.models import Event as StoredEvent
from tests.polling import eventually
from tests.vertex.conftest import APP
from tests.vertex.test_memory_bank import background_ingestions_succeed, said

pytestmark = pytest.mark.django_db(transaction=True)


def project(server, key: str | None = None) -> httpx.Client:
    """Project mode as ADK for Java sends it: the key as an OAuth token, paths under projects/p/locations/l."""
    return httpx.Client(
        base_url=f"{server.base_url}v1beta1/projects/p/locations/us-central1/",
        headers={"Authorization": f"Bearer {key or server.key}"},
    )


def java_event(text: str, delta: dict, *, millis: int) -> dict:
    """An event as ADK for Java's SessionJsonConverter writes it (no id, no rawEvent)."""
    return {
        "author": "user",
        "invocationId": "e-1",
        "timestamp": {"seconds": millis // 1000, "nanos": (millis % 1000) * 1_000_000},
        "eventMetadata": {
            "partial": False,
            "turnComplete": True,
            "usageMetadata": {"promptTokenCount": 3, "totalTokenCount": 5},
        },
        "actions": {"stateDelta": delta, "endOfAgent": True, "agentState": {"step": 2}},
        "content": {"role": "user", "parts": [{"text": text}]},
    }


def test_adk_java_session_round_trip_keeps_every_event_and_state_key(server):
    with project(server) as http:
        created = http.post(
            f"reasoningEngines/{server.engine_id}/sessions", json={"userId": "jo", "sessionState": {"k": "v"}}
        )
        assert created.status_code == 200, created.text
        parts = created.json()["name"].split("/")
        session_id, operation_id = parts[-3], parts[-1]  # how ADK for Java reads them
        polled = http.get(f"operations/{operation_id}")  # then polls the location's operation
        assert polled.status_code == 200 and polled.json()["done"] is True, polled.text

        millis = int(time.time() * 1000)
        first = http.post(
            f"reasoningEngines/{server.engine_id}/sessions/{session_id}:appendEvent",
            json=java_event("bonjour", {"count": 1, "temp:scratch": "x", "user:lang": "fr"}, millis=millis),
        )
        second = http.post(
            f"reasoningEngines/{server.engine_id}/sessions/{session_id}:appendEvent",
            json=java_event("encore", {"count": 2}, millis=millis + 5),
        )
        assert (first.status_code, second.status_code) == (200, 200), first.text + second.text

        session = http.get(f"reasoningEngines/{server.engine_id}/sessions/{session_id}").json()
        events = http.get(f"reasoningEngines/{server.engine_id}/sessions/{session_id}/events").json()["sessionEvents"]
    assert session["sessionState"] == {"k": "v", "count": 2, "user:lang": "fr"}
    assert [e["content"]["parts"][0]["text"] for e in events] == ["bonjour", "encore"]
    assert (
        events[0]["timestamp"]
        == time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(millis // 1000)) + f".{millis % 1000:03d}000Z"
    )
    stored = Event.model_validate(StoredEvent.objects.order_by("version").first().data)
    assert stored.usage_metadata.total_token_count == 5 and stored.actions.end_of_agent is True
    assert stored.actions.agent_state == {"step": 2}


@pytest.mark.parametrize("ttl", ["3600s", {"seconds": 3600}, {"seconds": "3600", "nanos": 0}])
def test_a_duration_is_taken_as_a_string_or_as_seconds_and_nanos(server, ttl):
    with project(server) as http:
        created = http.post(f"reasoningEngines/{server.engine_id}/sessions", json={"userId": "jo", "ttl": ttl})
    assert created.status_code == 200, created.text
    expires = created.json()["response"]["expireTime"]
    assert abs(time.mktime(time.strptime(expires[:19], "%Y-%m-%dT%H:%M:%S")) - time.mktime(time.gmtime()) - 3600) < 60


@pytest.mark.parametrize(
    "bad",
    [{"seconds": 1.5}, {"seconds": 1, "nanos": 10**9}, {"seconds": 1, "millis": 2}, {"seconds": 10**12}, "yesterday"],
)
def test_a_malformed_timestamp_is_a_400_and_stores_nothing(server, bad):
    with project(server) as http:
        http.post(f"reasoningEngines/{server.engine_id}/sessions?sessionId=s1", json={"userId": "jo"})
        event = {**java_event("x", {"a": 1}, millis=0), "timestamp": bad}
        response = http.post(f"reasoningEngines/{server.engine_id}/sessions/s1:appendEvent", json=event)
    assert response.status_code == 400 and response.json()["error"]["status"] == "INVALID_ARGUMENT", response.text
    assert StoredEvent.objects.count() == 0


def test_operations_are_found_by_id_alone_at_the_location_and_in_express_mode(server):
    with project(server) as http:
        name = http.post(f"reasoningEngines/{server.engine_id}/sessions", json={"userId": "jo"}).json()["name"]
        operation_id = name.rsplit("/", 1)[1]
        at_location = http.get(f"operations/{operation_id}").json()
    express = httpx.get(f"{server.base_url}v1beta1/operations/{operation_id}", headers={"x-goog-api-key": server.key})
    future = httpx.get(
        f"{server.base_url}v1beta1/operations/{time.time_ns() + 10**15}", headers={"x-goog-api-key": server.key}
    )
    anonymous = httpx.get(f"{server.base_url}v1beta1/operations/{operation_id}")

    assert at_location == {"name": f"projects/p/locations/us-central1/operations/{operation_id}", "done": True}
    assert express.json() == {"name": f"operations/{operation_id}", "done": True}
    assert future.status_code == 404 and future.json()["error"]["status"] == "NOT_FOUND"
    assert anonymous.status_code in (401, 403)


def test_a_generation_is_followed_at_the_location_by_its_app_only(server, celery_worker):
    body = {
        "scope": {"user_id": "jo"},
        "directContentsSource": {"events": [{"content": {"role": "user", "parts": [{"text": "I live in Oslo."}]}}]},
    }
    with project(server) as http:
        operation = http.post(f"reasoningEngines/{server.engine_id}/memories:generate", json=body).json()
        operation_id = operation["name"].rsplit("/", 1)[1]
        deadline = time.monotonic() + 60
        while not (done := http.get(f"operations/{operation_id}").json()).get("done") and time.monotonic() < deadline:
            time.sleep(0.1)
    other = server.key_for(app_name="another_app")
    foreign = httpx.get(f"{server.base_url}v1beta1/operations/{operation_id}", headers={"x-goog-api-key": other})

    assert done["name"] == f"projects/p/locations/us-central1/operations/{operation_id}"
    assert [m["memory"]["fact"] for m in done["response"]["generatedMemories"]] == ["I live in Oslo."]
    assert ConsolidationJob.objects.count() == 1
    assert foreign.status_code == 404


def test_a_delete_is_done_with_an_empty_response_that_grpc_clients_unpack(server):
    with project(server) as http:
        http.post(f"reasoningEngines/{server.engine_id}/sessions?sessionId=s1", json={"userId": "jo"})
        deleted = http.delete(f"reasoningEngines/{server.engine_id}/sessions/s1").json()
    assert deleted["done"] is True
    assert deleted["response"] == {"@type": "type.googleapis.com/google.protobuf.Empty"}


def engine_spellings(server) -> list[str]:
    return [
        APP,
        str(server.engine_id),
        f"reasoningEngines/{server.engine_id}",
        f"projects/p/locations/us-central1/reasoningEngines/{server.engine_id}",
    ]


def test_a_scope_names_the_engine_by_app_engine_id_or_resource_name_and_comes_back_as_given(server):
    with project(server) as http:
        for spelling in engine_spellings(server):
            scope = {"app_name": spelling, "user_id": "jo"}
            created = http.post(
                f"reasoningEngines/{server.engine_id}/memories",
                json={"fact": f"Fact under {spelling}.", "scope": scope},
            )
            assert created.status_code == 200, created.text
            assert created.json()["response"]["scope"] == scope
        bare = http.post(
            f"reasoningEngines/{server.engine_id}/memories:retrieve",
            json={"scope": {"user_id": "jo"}, "similaritySearchParams": {"searchQuery": "fact", "topK": 10}},
        ).json()
        wrong = http.post(
            f"reasoningEngines/{server.engine_id}/memories:retrieve",
            json={"scope": {"app_name": "123456789", "user_id": "jo"}, "similaritySearchParams": {"searchQuery": "x"}},
        )

    assert len(bare["retrievedMemories"]) == 4  # one scope, however the app was named
    assert all(hit["memory"]["scope"] == {"user_id": "jo"} for hit in bare["retrievedMemories"])
    assert wrong.status_code == 400 and str(server.engine_id) in wrong.json()["error"]["message"]


@pytest.mark.parametrize("spelling", ["engine id", "resource name"])
async def test_adk_memory_with_the_engine_as_app_name_ingests_and_recalls(vertex, celery_worker, spelling):
    """Google's docs hand ADK the engine id (or its resource name) as ``app_name``: memory must work with it."""
    app_name = str(vertex.engine_id) if spelling == "engine id" else f"reasoningEngines/{vertex.engine_id}"
    sessions, memory = vertex.sessions(), vertex.memory()
    session = await sessions.create_session(app_name=app_name, user_id="ada")
    await sessions.append_event(session, said("user", "My cat is called Miso."))
    session = await sessions.get_session(app_name=app_name, user_id="ada", session_id=session.id)

    await memory.add_session_to_memory(session)
    await background_ingestions_succeed()

    async def recalled():
        found = await memory.search_memory(app_name=app_name, user_id="ada", query="what is my cat called?")
        return [entry.content.parts[0].text for entry in found.memories]

    assert (await eventually(recalled))[0] == "My cat is called Miso."
    native = await PostgresSessionService().get_session(app_name=APP, user_id="ada", session_id=session.id)
    assert native is not None and native.events[0].content.parts[0].text == "My cat is called Miso."


def test_enums_are_taken_by_number_wherever_vertex_takes_them(server):
    """proto3 JSON writes an enum by name or by number; Google's GAPIC REST clients send numbers."""
    from memory_app.models import MemoryBankConfig

    with project(server) as http:
        engine = f"reasoningEngines/{server.engine_id}"
        bank = {"customizationConfigs": [{"memoryTopics": [{"managedMemoryTopic": {"managedTopicEnum": 4}}]}]}
        patched = http.patch(
            engine,
            params={"updateMask": "contextSpec.memoryBankConfig"},
            json={"contextSpec": {"memoryBankConfig": bank}},
        )
        http.post(
            f"{engine}/memories",
            json={
                "fact": "Always answer in French.",
                "scope": {"user_id": "jo"},
                "metadata": {"source": {"stringValue": "chat"}},
            },
        )
        retrieved = http.post(
            f"{engine}/memories:retrieve",
            json={
                "scope": {"user_id": "jo"},
                "memoryTypes": [1],
                "filterGroups": [{"filters": [{"key": "source", "value": {"stringValue": "chat"}, "op": 1}]}],
            },
        )
        unknown = http.post(f"{engine}/memories:retrieve", json={"scope": {"user_id": "jo"}, "memoryTypes": [99]})

    assert patched.status_code == 200, patched.text
    assert MemoryBankConfig.objects.get(app_name=APP).managed_topics == ["instruction"]
    assert retrieved.status_code == 200, retrieved.text
    assert [m["memory"]["fact"] for m in retrieved.json()["retrievedMemories"]] == ["Always answer in French."]
    assert unknown.status_code == 400 and "99" in unknown.json()["error"]["message"]

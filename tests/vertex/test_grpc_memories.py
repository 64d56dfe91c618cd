"""Vertex AI's MemoryBankService over gRPC (Google's GAPIC client), and what hostile callers get from the server.

Generation runs on a real Celery worker; the operation the client waits on is
the consolidation job's. Hostile input gets a status code each, stores nothing,
and leaves the server serving.
"""

from __future__ import annotations

import grpc
import pytest
from google.api_core import exceptions
from google.cloud.aiplatform_v1beta1.types import Memory, memory_bank_service, session_service
from google.protobuf import field_mask_pb2

from memory_app.models import Memory as StoredMemory
from sessions_app.models import Session as StoredSession
from tests.vertex.conftest import APP
from tests.vertex.test_grpc_sessions import create

pytestmark = pytest.mark.django_db(transaction=True)

SESSIONS = "/google.cloud.aiplatform.v1beta1.SessionService/"


def retrieve(client, grpc_server, query: str, user: str = "gina") -> list[str]:
    found = client.retrieve_memories(
        request={
            "parent": grpc_server.engine,
            "scope": {"user_id": user},
            "similarity_search_params": {"search_query": query, "top_k": 5},
        },
        metadata=grpc_server.metadata(),
    )
    return [hit.memory.fact for hit in found.retrieved_memories]


def test_every_memory_method_over_grpc(grpc_server):
    client, meta = grpc_server.memories(), grpc_server.metadata()
    operation = client.create_memory(
        parent=grpc_server.engine, memory=Memory(fact="I live in Lisbon.", scope={"user_id": "gina"}), metadata=meta
    )
    created = operation.result(timeout=10)

    assert created.scope == {"user_id": "gina"} and created.name.startswith(grpc_server.engine + "/memories/")
    assert client.get_memory(name=created.name, metadata=meta).fact == "I live in Lisbon."
    assert [m.fact for m in client.list_memories(parent=grpc_server.engine, metadata=meta)] == ["I live in Lisbon."]
    assert retrieve(client, grpc_server, "where do I live?") == ["I live in Lisbon."]
    assert retrieve(client, grpc_server, "where do I live?", user="someone else") == []

    updated = client.update_memory(
        memory=Memory(name=created.name, fact="I live in Porto."),
        update_mask=field_mask_pb2.FieldMask(paths=["fact"]),
        metadata=meta,
    ).result(timeout=10)
    assert updated.fact == "I live in Porto." and StoredMemory.objects.get().text == "I live in Porto."

    client.delete_memory(name=created.name, metadata=meta).result(timeout=10)
    with pytest.raises(exceptions.NotFound):
        client.get_memory(name=created.name, metadata=meta)


def test_generation_over_grpc_runs_on_a_worker_and_the_client_waits_for_it(grpc_server, celery_worker):
    client = grpc_server.memories()
    operation = client.generate_memories(
        request={
            "parent": grpc_server.engine,
            "scope": {"user_id": "gina"},
            "direct_contents_source": {
                "events": [{"content": {"role": "user", "parts": [{"text": "My favourite colour is green."}]}}]
            },
        },
        metadata=grpc_server.metadata(),
    )

    generated = operation.result(timeout=60)  # the GAPIC polls GetOperation until the job is done

    assert isinstance(generated, memory_bank_service.GenerateMemoriesResponse)
    assert [m.memory.fact for m in generated.generated_memories] == ["My favourite colour is green."]
    assert (
        generated.generated_memories[0].action
        == memory_bank_service.GenerateMemoriesResponse.GeneratedMemory.Action.CREATED
    )
    assert retrieve(client, grpc_server, "favourite colour") == ["My favourite colour is green."]


def test_generation_from_a_session_made_over_grpc(grpc_server, celery_worker):
    from tests.vertex.test_grpc_sessions import event

    sessions, meta = grpc_server.sessions(), grpc_server.metadata()
    create(sessions, grpc_server, "gina", "g1")
    name = f"{grpc_server.engine}/sessions/g1"
    sessions.append_event(name=name, event=event("My sister is called Ana.", {}), metadata=meta)

    grpc_server.memories().generate_memories(
        request={"parent": grpc_server.engine, "vertex_session_source": {"session": name}}, metadata=meta
    ).result(timeout=60)

    assert retrieve(grpc_server.memories(), grpc_server, "what is my sister's name?") == ["My sister is called Ana."]


@pytest.mark.parametrize("case", ["garbage", "wrong type", "unknown method", "unknown service", "too big", "no key"])
def test_hostile_calls_get_a_status_each_store_nothing_and_the_server_keeps_serving(grpc_server, case):
    from google.longrunning import operations_pb2

    channel = grpc.insecure_channel(grpc_server.target, options=[("grpc.max_send_message_length", 20 * 2**20)])
    meta = grpc_server.metadata()
    sent = {
        "garbage": (SESSIONS + "CreateSession", b"\xff\xfe\x00garbage\x07" * 10, meta),
        "wrong type": (
            SESSIONS + "AppendEvent",
            operations_pb2.GetOperationRequest(name="x").SerializeToString(),
            meta,
        ),
        "unknown method": (SESSIONS + "ForkSession", b"", meta),
        "unknown service": ("/google.cloud.aiplatform.v1beta1.ReasoningEngineService/ListReasoningEngines", b"", meta),
        "too big": (
            SESSIONS + "CreateSession",
            memory_bank_service.CreateMemoryRequest.serialize(
                memory_bank_service.CreateMemoryRequest(parent=grpc_server.engine, memory=Memory(fact="x" * 10 * 2**20))
            ),
            meta,
        ),
        "no key": (
            SESSIONS + "CreateSession",
            session_service.CreateSessionRequest.serialize(
                session_service.CreateSessionRequest(parent=grpc_server.engine, session={"user_id": "gina"})
            ),
            [],
        ),
    }[case]
    method, payload, metadata = sent
    expected = {
        "garbage": grpc.StatusCode.INVALID_ARGUMENT,
        "wrong type": grpc.StatusCode.INVALID_ARGUMENT,
        "unknown method": grpc.StatusCode.UNIMPLEMENTED,
        "unknown service": grpc.StatusCode.UNIMPLEMENTED,
        "too big": grpc.StatusCode.RESOURCE_EXHAUSTED,
        "no key": grpc.StatusCode.UNAUTHENTICATED,
    }[case]
    call = channel.unary_unary(method, request_serializer=None, response_deserializer=None)

    with pytest.raises(grpc.RpcError) as refused:
        call(payload, metadata=metadata, timeout=30)

    assert refused.value.code() == expected, refused.value.details()
    assert StoredSession.objects.count() == 0 and StoredMemory.objects.count() == 0
    create(grpc_server.sessions(), grpc_server, "gina", "after")  # still serving
    assert StoredSession.objects.filter(app_name=APP, session_id="after").exists()

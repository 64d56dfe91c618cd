"""Vertex AI's SessionService and Operations over gRPC, driven by Google's own GAPIC client.

ADK for Go reaches Agent Engine only this way; Google's Python client sends the
same methods and metadata, so it drives every method here (the Go client itself
runs in test_go_client.py). The rows are those of REST and of ADK's
``PostgresSessionService``.
"""

from __future__ import annotations

import asyncio
import datetime

import grpc
import pytest
from google.api_core import exceptions
from google.cloud.aiplatform_v1beta1.types import Session, SessionEvent
from google.longrunning import operations_pb2
from google.protobuf import empty_pb2, field_mask_pb2, struct_pb2

from cognizes.adk import PostgresSessionService
from sessions_app.models import Event as StoredEvent
from sessions_app.models import Session as StoredSession
from tests.vertex.conftest import APP

pytestmark = pytest.mark.django_db(transaction=True)


def event(text: str, delta: dict, **fields) -> SessionEvent:
    state = struct_pb2.Struct()
    state.update(delta)
    return SessionEvent(
        author="user",
        invocation_id="inv-1",
        timestamp=datetime.datetime.now(datetime.UTC),
        content={"role": "user", "parts": [{"text": text}]},
        actions={"state_delta": state},
        **fields,
    )


def create(client, grpc_server, user: str, session_id: str | None = None, **fields):
    request = {"parent": grpc_server.engine, "session": Session(user_id=user, **fields)}
    if session_id:
        request["session_id"] = session_id
    return client.create_session(request=request, metadata=grpc_server.metadata())


def test_every_session_method_over_grpc_on_the_rows_adk_reads(grpc_server):
    client, meta = grpc_server.sessions(), grpc_server.metadata()
    operation = create(
        client, grpc_server, "gina", "g1", session_state={"k": "v", "user:lang": "it"}, display_name="first"
    )

    assert "/sessions/g1/operations/" in operation.operation.name  # ADK-Go reads the session id from it
    assert operation.done() and operation.result().user_id == "gina"
    name = f"{grpc_server.engine}/sessions/g1"
    assert client.get_session(name=name, metadata=meta).session_state["k"] == "v"
    listed = client.list_sessions(request={"parent": grpc_server.engine, "filter": 'userId="gina"'}, metadata=meta)
    assert [s.name for s in listed] == [name]
    assert (
        list(client.list_sessions(request={"parent": grpc_server.engine, "filter": 'user_id="nobody"'}, metadata=meta))
        == []
    )

    client.append_event(
        name=name, event=event("ciao", {"count": 1, "temp:scratch": 1, "app:tier": "gold"}), metadata=meta
    )
    client.append_event(name=name, event=event("ancora", {"count": 2}), metadata=meta)
    updated = client.update_session(
        session=Session(name=name, display_name="renamed"),
        update_mask=field_mask_pb2.FieldMask(paths=["display_name"]),
        metadata=meta,
    )
    events = list(client.list_events(parent=name, metadata=meta))

    assert updated.display_name == "renamed"
    assert dict(updated.session_state) == {"k": "v", "user:lang": "it", "count": 2, "app:tier": "gold"}
    assert [e.content.parts[0].text for e in events] == ["ciao", "ancora"]
    assert events[0].raw_event["author"] == "user" and events[0].name.startswith(name + "/events/")
    native = asyncio.run(PostgresSessionService().get_session(app_name=APP, user_id="gina", session_id="g1"))
    assert [e.content.parts[0].text for e in native.events] == ["ciao", "ancora"]
    assert native.state["count"] == 2 and "temp:scratch" not in native.state

    deleted = client.delete_session(name=name, metadata=meta)
    assert isinstance(deleted.result(timeout=10), empty_pb2.Empty)  # ADK-Go waits on this operation
    with pytest.raises(exceptions.NotFound):
        client.get_session(name=name, metadata=meta)


def test_list_events_filters_by_time_and_pages(grpc_server):
    client, meta = grpc_server.sessions(), grpc_server.metadata()
    create(client, grpc_server, "gina", "g1")
    name = f"{grpc_server.engine}/sessions/g1"
    for i in range(5):
        client.append_event(name=name, event=event(f"e{i}", {}), metadata=meta)
    every = list(client.list_events(request={"parent": name, "page_size": 2}, metadata=meta))
    since = every[3].timestamp.isoformat()
    recent = list(client.list_events(request={"parent": name, "filter": f'timestamp>="{since}"'}, metadata=meta))

    assert [e.content.parts[0].text for e in every] == ["e0", "e1", "e2", "e3", "e4"]
    assert [e.content.parts[0].text for e in recent] == ["e3", "e4"]


def test_operations_are_read_and_waited_for_over_grpc(grpc_server):
    from google.longrunning import operations_pb2_grpc

    operation = create(grpc_server.sessions(), grpc_server, "gina", "g1").operation
    stub = operations_pb2_grpc.OperationsStub(grpc.insecure_channel(grpc_server.target))
    got = stub.GetOperation(operations_pb2.GetOperationRequest(name=operation.name), metadata=grpc_server.metadata())
    waited = stub.WaitOperation(
        operations_pb2.WaitOperationRequest(name=operation.name), metadata=grpc_server.metadata()
    )

    assert got.done and waited.done
    assert Session.deserialize(got.response.value).name.endswith("/sessions/g1")


@pytest.mark.parametrize("key", ["", "cgz_not-a-key"])
def test_a_call_without_a_valid_key_is_unauthenticated_and_stores_nothing(grpc_server, key):
    with pytest.raises(exceptions.Unauthenticated):
        grpc_server.sessions(grpc.insecure_channel(grpc_server.target)).create_session(
            request={"parent": grpc_server.engine, "session": Session(user_id="gina")},
            metadata=grpc_server.metadata(key),
        )
    assert StoredSession.objects.count() == 0


def test_keys_scope_grpc_calls_as_they_scope_rest(grpc_server):
    from cognizes.access.services import do_create_api_key

    client = grpc_server.sessions()
    create(client, grpc_server, "gina", "g1")
    name = f"{grpc_server.engine}/sessions/g1"
    read_only = do_create_api_key(name="ro", app_name=APP, read_only=True)[1]
    other_user = do_create_api_key(name="u", app_name=APP, user_id="someone")[1]
    other_app = do_create_api_key(name="a", app_name="another_app")[1]
    bearer = [("authorization", f"Bearer {grpc_server.key}")]

    assert client.get_session(name=name, metadata=bearer).user_id == "gina"
    assert client.get_session(name=name, metadata=grpc_server.metadata(read_only)).user_id == "gina"
    with pytest.raises(exceptions.PermissionDenied) as refused:
        client.append_event(name=name, event=event("x", {"a": 1}), metadata=grpc_server.metadata(read_only))
    assert f"needs a read-write key (`cognizes create_api_key {APP}`" in refused.value.message  # issue 43 item 2
    for key in (other_user, other_app):
        with pytest.raises(exceptions.NotFound):
            client.get_session(name=name, metadata=grpc_server.metadata(key))
    assert StoredEvent.objects.count() == 0


def test_refusals_carry_googles_status_codes(grpc_server):
    client, meta = grpc_server.sessions(), grpc_server.metadata()
    create(client, grpc_server, "gina", "g1")

    with pytest.raises(exceptions.AlreadyExists):
        create(client, grpc_server, "gina", "g1")
    with pytest.raises(exceptions.InvalidArgument):
        list(client.list_sessions(request={"parent": grpc_server.engine, "filter": "user_id OR x"}, metadata=meta))
    with pytest.raises(exceptions.InvalidArgument):
        client.get_session(name="", metadata=meta)
    with pytest.raises(exceptions.NotFound):
        client.get_session(name=f"{grpc_server.engine}/sessions/nope", metadata=meta)
    with pytest.raises(exceptions.NotFound):
        client.get_session(name="projects/p/locations/l/reasoningEngines/1/sessions/g1", metadata=meta)


def test_with_a_certificate_the_server_speaks_tls_and_takes_the_key_as_call_credentials(grpc_tls_server):
    endpoint, certificate = grpc_tls_server
    with open(certificate, "rb") as pem:
        tls = grpc.ssl_channel_credentials(root_certificates=pem.read())
    api_key = grpc.metadata_call_credentials(
        lambda context, callback: callback([("x-goog-api-key", endpoint.key)], None)
    )
    secure = grpc.secure_channel(endpoint.target, grpc.composite_channel_credentials(tls, api_key))

    created = endpoint.sessions(secure).create_session(
        request={"parent": endpoint.engine, "session": Session(user_id="gina")}
    )
    assert created.result().user_id == "gina"
    with pytest.raises(exceptions.ServiceUnavailable):  # a plaintext client cannot talk to it
        endpoint.sessions(grpc.insecure_channel(endpoint.target)).get_session(
            name=created.result().name, metadata=endpoint.metadata(), retry=None, timeout=5
        )

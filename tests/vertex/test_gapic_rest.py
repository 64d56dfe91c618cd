"""Google's GAPIC clients over REST (``transport="rest"``), as Go's REST clients and Java's GAPIC send it.

They write proto3 JSON with enums as numbers (``$alt=json;enum-encoding=int``) and
parse every operation's ``response`` by its ``@type``: both must work, or a
client Vertex serves gets a 400 here.
"""

from __future__ import annotations

import datetime

import pytest
from google.api_core import exceptions
from google.api_core.client_options import ClientOptions
from google.cloud.aiplatform_v1beta1 import MemoryBankServiceClient, SessionServiceClient
from google.cloud.aiplatform_v1beta1.types import Memory, Session, SessionEvent

from memory_app.models import Kind
from memory_app.models import Memory as StoredMemory

pytestmark = pytest.mark.django_db(transaction=True)


def options(server) -> ClientOptions:
    return ClientOptions(api_endpoint=server.base_url.rstrip("/"), api_key=server.key)


def engine(server) -> str:
    return f"projects/p/locations/us-central1/reasoningEngines/{server.engine_id}"


def test_the_rest_gapic_session_client_creates_appends_lists_and_deletes(server):
    client = SessionServiceClient(transport="rest", client_options=options(server))
    session = client.create_session(
        parent=engine(server), session=Session(user_id="rita", session_state={"k": "v"})
    ).result()
    client.append_event(
        name=session.name,
        event=SessionEvent(
            author="user",
            invocation_id="i1",
            timestamp=datetime.datetime.now(datetime.UTC),
            content={"role": "user", "parts": [{"text": "olá"}]},
        ),
    )

    assert [e.content.parts[0].text for e in client.list_events(parent=session.name)] == ["olá"]
    assert [s.name for s in client.list_sessions(request={"parent": engine(server), "filter": 'user_id="rita"'})] == [
        session.name
    ]
    client.delete_session(name=session.name).result(timeout=10)
    with pytest.raises(exceptions.NotFound):
        client.get_session(name=session.name)


def test_enums_written_as_numbers_are_taken(server):
    client = MemoryBankServiceClient(transport="rest", client_options=options(server))
    preference = (
        Memory.pb()
        .DESCRIPTOR.fields_by_name["topics"]
        .message_type.fields_by_name["managed_memory_topic"]
        .enum_type.values_by_name["USER_PREFERENCES"]
        .number
    )
    memory = client.create_memory(
        parent=engine(server),
        memory=Memory(
            fact="I take my tea without sugar.",
            scope={"user_id": "rita"},
            topics=[{"managed_memory_topic": preference}],
        ),
    ).result(timeout=10)

    assert StoredMemory.objects.get().kind == Kind.PREFERENCE
    assert memory.topics[0].managed_memory_topic.name == "USER_PREFERENCES"
    found = client.retrieve_memories(
        request={
            "parent": engine(server),
            "scope": {"user_id": "rita"},
            "similarity_search_params": {"search_query": "how do I take tea?"},
        }
    )
    assert [hit.memory.fact for hit in found.retrieved_memories] == ["I take my tea without sugar."]

"""Ids, numbers, names and times that answered 500 on the Vertex surface (issue 41 K) now get a 4xx that says what is
wrong, over REST and gRPC, and change nothing.

``'²'`` is a digit to ``str.isdigit`` but not to ``int()``; ``99999999999999999999`` is past PostgreSQL's bigint;
``1e400`` is a JSON number Python reads as infinity, which jsonb cannot hold; a time "99999999999 days ago" is
before year 1; a 600-character name or a 300-character media type is longer than its column.
"""

from __future__ import annotations

import json

import grpc
import pytest
from google.api_core import exceptions
from google.cloud.aiplatform_v1beta1.types import Memory, Session
from google.longrunning import operations_pb2, operations_pb2_grpc
from google.protobuf import struct_pb2
from rest_framework.test import APIClient

from cognizes.access.services import do_create_api_key
from demo_agents.weather.tools import register
from knowledge_app import services as knowledge
from knowledge_app.models import Corpus, Document
from memory_app.models import Memory as StoredMemory
from runtime_app.agents import forget_runners
from sessions_app.models import Event
from sessions_app.models import Session as StoredSession
from tests.vertex.conftest import APP
from vertex_app.services import do_get_or_create_engine

pytestmark = pytest.mark.django_db(transaction=True)

SUPERSCRIPT, PAST_BIGINT = "²", "99999999999999999999"
LONG_AGO = "what happened 99999999999 days ago"


@pytest.fixture
def vertex():
    """An in-process client with a key of the app, its engine and a corpus: (client, engine path, corpus path)."""
    engine = do_get_or_create_engine(app_name=APP)
    _, key = do_create_api_key(name="hostile", app_name=APP)
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_X_GOOG_API_KEY=key)
    corpus = knowledge.do_create_corpus(app_name=APP, display_name="handbook")
    engine_path = f"/v1beta1/reasoningEngines/{engine.engine_id}"
    assert client.post(f"{engine_path}/sessions?sessionId=s1", {"userId": "ada"}, format="json").status_code == 200
    return client, engine_path, f"/v1beta1/ragCorpora/{corpus.id}"


def _stored() -> tuple[int, ...]:
    return (
        Corpus.objects.count(),
        Document.objects.count(),
        StoredSession.objects.count(),
        Event.objects.count(),
        StoredMemory.objects.count(),
    )


def _retrieve(corpus: str, **query) -> str:
    store = {"ragResources": [{"ragCorpus": corpus.removeprefix("/v1beta1/")}]}
    return json.dumps({"vertexRagStore": store, "query": {"text": "leave", **query}})


def _raw(text: str, corpus: str = "") -> str:
    """A body with a number JSON writers will not produce (1e400), spliced in as text."""
    return text.replace("CORPUS", corpus.removeprefix("/v1beta1/"))


RETRIEVE = "/v1beta1/projects/p/locations/l:retrieveContexts"
# (method, path with {E} the engine and {C} the corpus, body, what the error message says)
CASES = [
    ("get", f"/v1beta1/ragCorpora/{SUPERSCRIPT}", None, "does not exist"),
    ("get", f"{{C}}/ragFiles/{SUPERSCRIPT}", None, "does not exist"),
    ("delete", f"{{C}}/ragFiles/{SUPERSCRIPT}", None, "does not exist"),
    ("get", f"{{C}}/operations/import-{SUPERSCRIPT}", None, "does not exist"),
    ("get", f"{{C}}/operations/create-{SUPERSCRIPT}", None, "does not exist"),
    ("get", f"/v1beta1/operations/{SUPERSCRIPT}", None, "does not exist"),
    ("get", f"/v1beta1/projects/p/locations/l/operations/{SUPERSCRIPT}", None, "does not exist"),
    ("get", f"{{E}}/operations/{SUPERSCRIPT}", None, "does not exist"),
    ("get", f"{{E}}/sessions?pageToken={SUPERSCRIPT}", None, "pageToken"),
    ("get", f"{{E}}/sessions/s1/events?pageToken={SUPERSCRIPT}", None, "pageToken"),
    ("get", f"{{E}}/memories?pageToken={SUPERSCRIPT}", None, "pageToken"),
    ("get", f"/v1beta1/ragCorpora?pageToken={SUPERSCRIPT}", None, "pageToken"),
    ("get", f"{{C}}/ragFiles?pageToken={SUPERSCRIPT}", None, "pageToken"),
    ("get", f"/v1/projects/p/locations/l/agents?pageToken={SUPERSCRIPT}", None, "pageToken"),
    ("get", f"/v1/projects/p/locations/l/mcpServers?pageToken={SUPERSCRIPT}", None, "pageToken"),
    ("get", f"{{C}}/operations/import-{PAST_BIGINT}", None, "does not exist"),
    (
        "post",
        RETRIEVE,
        '{"vertexRagStore": {"ragResources": [{"ragCorpus": "CORPUS"}]}, '
        '"query": {"text": "leave", "similarityTopK": 1e400}}',
        "finite",
    ),
    (
        "post",
        RETRIEVE,
        '{"vertexRagStore": {"ragResources": [{"ragCorpus": "CORPUS"}], '
        '"vectorDistanceThreshold": 1e400}, "query": {"text": "leave"}}',
        "finite",
    ),
    (
        "post",
        RETRIEVE,
        '{"vertexRagStore": {"ragResources": [{"ragCorpus": "CORPUS"}]}, '
        '"query": {"text": "leave", "similarityTopK": NaN}}',
        "NaN",
    ),
    (
        "post",
        RETRIEVE,
        '{"vertexRagStore": {"ragResources": [{"ragCorpus": "CORPUS"}]}, '
        '"query": {"text": "leave", "similarityTopK": Infinity}}',
        "Infinity",
    ),
    (
        "post",
        RETRIEVE,
        '{"vertexRagStore": {"ragResources": [{"ragCorpus": "CORPUS", "ragFileIds": ["1"]}], '
        '"vectorDistanceThreshold": "NaN"}, "query": {"text": "leave"}}',
        "finite",
    ),
    (
        "post",
        RETRIEVE,
        '{"vertexRagStore": {"ragResources": [{"ragCorpus": "CORPUS"}]}, "query": {"text": "leave", '
        '"ragRetrievalConfig": {"filter": {"metadataFilter": "year = 1e400"}}}}',
        "out of range",
    ),
    (
        "post",
        "{E}/memories:retrieve",
        '{"scope": {"user_id": "ada"}, "similaritySearchParams": {"searchQuery": "tea", "topK": 1e400}}',
        "finite",
    ),
    (
        "post",
        "{E}/memories:retrieve",
        '{"scope": {"user_id": "ada"}, "simpleRetrievalParams": {"pageSize": 1e400}}',
        "finite",
    ),
    (
        "post",
        "{E}/memories:retrieve",
        '{"scope": {"user_id": "ada"}, "filterGroups": [{"filters": [{"key": "a", "value": {"doubleValue": 1e400}}]}]}',
        "finite",
    ),
    (
        "post",
        "{E}/memories",
        '{"fact": "x", "scope": {"user_id": "ada"}, "metadata": {"a": {"doubleValue": 1e400}}}',
        "finite",
    ),
    (
        "post",
        "{E}/memories",
        '{"fact": "x", "scope": {"user_id": "ada"}, "metadata": {"a": {"stringValue": "b\\u0000"}}}',
        "NUL",
    ),
    ("post", "{E}/sessions?sessionId=s2", '{"userId": "ada", "sessionState": {"a": 1e400}}', "finite"),
    ("post", "/v1beta1/ragCorpora", json.dumps({"displayName": "d" * 600}), "at most 512 characters"),
    (
        "post",
        "/upload/v1beta1/ragCorpora/CORPUS_ID/ragFiles:upload",
        '{"uploadRagFileConfig": {"ragFileChunkingConfig": {"chunkSize": 1e400}}}',
        "finite",
    ),
]


@pytest.mark.parametrize(
    ("method", "path", "body", "says"), CASES, ids=[f"{m} {p[:40]} {(b or '')[-40:]}" for m, p, b, _ in CASES]
)
def test_hostile_ids_and_numbers_get_a_4xx_that_says_what_is_wrong(vertex, method, path, body, says):
    client, engine, corpus = vertex
    path = path.format(E=engine, C=corpus).replace("CORPUS_ID", corpus.rpartition("/")[2])
    before = _stored()
    kwargs = {"data": _raw(body, corpus), "content_type": "application/json"} if body is not None else {}
    if path.startswith("/upload/"):
        kwargs["HTTP_X_GOOG_UPLOAD_PROTOCOL"] = "resumable"

    response = getattr(client, method)(path, **kwargs)

    assert 400 <= response.status_code < 500, (response.status_code, response.content[:300])
    error = response.json()["error"]
    assert set(error) == {"code", "message", "status"} and says in error["message"], error
    assert _stored() == before


@pytest.mark.parametrize(
    ("file_name", "content_type", "says"),
    [
        ("f" * 600, "text/plain", "A display name may have at most 512 characters"),
        ("a.txt", "text/" + "p" * 300, "A media type (Content-Type) may have at most 255 characters"),
    ],
)
def test_an_upload_named_or_typed_longer_than_is_kept_is_refused_before_the_bytes(
    vertex, file_name, content_type, says
):
    """Google's resumable start (agentplatform) and the older SDK's multipart form: refused with the limit named."""
    client, _, corpus = vertex
    path = f"/upload{corpus}/ragFiles:upload"

    started = client.post(
        path,
        "{}",
        content_type="application/json",
        HTTP_X_GOOG_UPLOAD_PROTOCOL="resumable",
        HTTP_X_GOOG_UPLOAD_FILE_NAME=file_name,
        HTTP_X_GOOG_UPLOAD_HEADER_CONTENT_TYPE=content_type,
    )
    form = client.post(
        path,
        {
            "file": _upload("a.txt", content_type),  # a form's file name Django cuts to 255
            "metadata": json.dumps({"rag_file": {"display_name": file_name}}),
        },
        HTTP_X_GOOG_UPLOAD_PROTOCOL="multipart",
    )

    for response in (started, form):
        assert response.status_code == 400, response.content[:300]
        assert says in response.json()["error"]["message"]
        assert "X-Goog-Upload-URL" not in response
    assert Document.objects.count() == 0


def _upload(name: str, content_type: str):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, b"Leave is 25 days a year.", content_type=content_type)


@pytest.mark.parametrize(
    ("metadata", "says"),
    [
        ("{'upload_rag_file_config': {'rag_file_chunking_config': {'chunk_size': 1e400}}}", "finite"),
        ("{'rag_file': {'display_name': 'a\\x00b'}}", "NUL"),
    ],
)
def test_the_older_sdks_python_literal_metadata_part_is_checked_as_json_bodies_are(vertex, metadata, says):
    """python-aiplatform writes the form's metadata with ``str()``: read as a literal, it bypassed the body's checks."""
    client, _, corpus = vertex

    response = client.post(
        f"/upload{corpus}/ragFiles:upload",
        {"file": _upload("a.txt", "text/plain"), "metadata": metadata},
        HTTP_X_GOOG_UPLOAD_PROTOCOL="multipart",
    )

    assert response.status_code == 400, response.content[:300]
    assert says in response.json()["error"]["message"]
    assert Document.objects.count() == 0


@pytest.mark.parametrize("file_id", [PAST_BIGINT, SUPERSCRIPT])
def test_a_file_id_no_file_can_have_names_none_in_a_retrieval(vertex, file_id):
    """A file id past bigint made PostgreSQL refuse the query (a 500): it names no file, so nothing is found."""
    client, _, corpus = vertex
    body = {
        "vertexRagStore": {"ragResources": [{"ragCorpus": corpus.removeprefix("/v1beta1/"), "ragFileIds": [file_id]}]},
        "query": {"text": "leave"},
    }

    response = client.post(RETRIEVE, body, format="json")

    assert response.status_code == 200, response.content[:300]
    assert response.json()["contexts"] == {"contexts": []}


def test_a_time_before_year_one_in_a_memory_search_names_no_time(vertex):
    """memory_app.when turned "99999999999 days ago" into a date before year 1: OverflowError, a 500."""
    client, engine, _ = vertex
    body = {"scope": {"user_id": "ada"}, "similaritySearchParams": {"searchQuery": LONG_AGO}}

    response = client.post(f"{engine}/memories:retrieve", body, format="json")

    assert response.status_code == 200, response.content[:300]
    assert response.json() == {"retrievedMemories": []}


def test_a_deployed_agents_search_memory_with_a_time_before_year_one_answers(settings):
    """The deployed agent's ``:query`` ``search_memory`` reaches the same search."""
    register()
    forget_runners()
    engine = do_get_or_create_engine(app_name="weather")
    _, key = do_create_api_key(name="hostile", app_name="weather")
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_X_GOOG_API_KEY=key)
    try:
        response = client.post(
            f"/v1beta1/reasoningEngines/{engine.engine_id}:query",
            {"classMethod": "async_search_memory", "input": {"user_id": "ada", "query": LONG_AGO}},
            format="json",
        )
    finally:
        forget_runners()

    assert response.status_code == 200, response.content[:300]
    assert response.json()["output"] == {"memories": []}


def test_grpc_hostile_numbers_ids_and_times_are_invalid_argument_or_answered(grpc_server):
    """The same inputs from Google's GAPIC clients over gRPC: INVALID_ARGUMENT, or an answer, never INTERNAL."""
    sessions, memories, meta = grpc_server.sessions(), grpc_server.memories(), grpc_server.metadata()
    state = struct_pb2.Struct()
    state.update({"a": float("inf")})
    before = _stored()

    refused = [
        lambda: sessions.create_session(
            parent=grpc_server.engine, session=Session(user_id="ada", session_state=state), metadata=meta
        ),
        lambda: list(
            sessions.list_sessions(request={"parent": grpc_server.engine, "page_token": SUPERSCRIPT}, metadata=meta)
        ),
        lambda: sessions.create_session(
            parent=grpc_server.engine, session=Session(user_id="ada", display_name="d" * 600), metadata=meta
        ),
        lambda: memories.create_memory(
            parent=grpc_server.engine,
            memory=Memory(fact="x", scope={"user_id": "ada"}, metadata={"a": {"double_value": float("inf")}}),
            metadata=meta,
        ),
    ]
    for call in refused:
        with pytest.raises(exceptions.InvalidArgument):
            call()
    stub = operations_pb2_grpc.OperationsStub(grpc.insecure_channel(grpc_server.target))
    with pytest.raises(grpc.RpcError) as missing:
        stub.GetOperation(
            operations_pb2.GetOperationRequest(name=f"{grpc_server.engine}/operations/{SUPERSCRIPT}"), metadata=meta
        )
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND
    found = memories.retrieve_memories(
        request={
            "parent": grpc_server.engine,
            "scope": {"user_id": "ada"},
            "similarity_search_params": {"search_query": LONG_AGO},
        },
        metadata=meta,
    )
    assert list(found.retrieved_memories) == []
    assert _stored() == before

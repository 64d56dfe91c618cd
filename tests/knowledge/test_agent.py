"""An agent answers from an app's documents through ``search_knowledge``, on any model, audited like any tool."""

from __future__ import annotations

import hashlib

import pytest
from google.adk.agents import LlmAgent
from google.genai import types

from cognizes.adk import runner_for
from cognizes.infra.db_threads import run_in_db_thread
from knowledge_app.ingestion import do_ingest
from knowledge_app.models import Corpus, Document
from tests.fake_llm import ScriptedLlm
from tests.knowledge.test_api import HANDBOOK
from tools_app.models import ToolExecution

pytestmark = pytest.mark.django_db(transaction=True)


def _indexed_handbook(
    app_name: str,
    filename: str = "handbook.md",
    text: str = HANDBOOK,
    *,
    corpus: Corpus | None = None,
    user_id: str = "",
) -> Corpus:
    corpus = corpus or Corpus.objects.create(app_name=app_name, display_name="Handbook", chunk_size=40, chunk_overlap=5)
    data = text.encode()
    document = Document.objects.create(
        corpus=corpus,
        app_name=app_name,
        user_id=user_id,
        display_name=filename,
        source_uri=filename,
        mime_type="text/markdown",
        size_bytes=len(data),
        content_hash=hashlib.sha256(data).hexdigest(),
        content=data,
    )
    assert do_ingest(document.id).endswith("chunks")
    return corpus


async def test_an_agent_searches_the_corpora_it_was_given_and_the_call_is_audited():
    await run_in_db_thread(_indexed_handbook, "shop")
    await run_in_db_thread(_indexed_handbook, "crm", "crm.md")  # another app's, named alike: never searched
    agent = LlmAgent(name="helper", model=ScriptedLlm(tool_name="search_knowledge", argument="query"))
    runner = runner_for(agent, app_name="shop", knowledge=["Handbook"], memory="off")
    message = types.Content(role="user", parts=[types.Part(text="How many days of paid leave do I get?")])

    events = [e async for e in runner.run_async(user_id="ada", session_id="s1", new_message=message)]

    [response] = [p.function_response.response for e in events for p in e.content.parts or [] if p.function_response]
    passages = response["passages"]
    assert "25 days of paid leave" in passages[0]["text"]
    assert (passages[0]["document"], passages[0]["heading"]) == ("handbook.md", "Employee handbook › Leave")
    assert {passage["document"] for passage in passages} == {"handbook.md"}
    assert events[-1].content.parts[0].text.startswith("Done: {'passages'")
    audited = await run_in_db_thread(lambda: list(ToolExecution.objects.filter(tool_name="search_knowledge")))
    assert [(e.app_name, e.status) for e in audited] == [("shop", "succeeded")]


async def test_the_tool_searches_as_the_turns_user_never_finding_another_users_documents():
    """Issue 41 H: a document uploaded with bob's key is bob's; the agent of ada's turn never finds it."""
    corpus = await run_in_db_thread(_indexed_handbook, "shop")
    notes = "Bob's private deal: 40 days of paid leave a year, agreed with the director."
    await run_in_db_thread(_indexed_handbook, "shop", "bobs-deal.md", notes, corpus=corpus, user_id="bob")
    agent = LlmAgent(name="helper", model=ScriptedLlm(tool_name="search_knowledge", argument="query"))
    runner = runner_for(agent, app_name="shop", knowledge=["Handbook"], memory="off")
    message = types.Content(role="user", parts=[types.Part(text="How many days of paid leave does Bob get?")])

    for user, sees_bobs in (("ada", False), ("bob", True)):
        events = [e async for e in runner.run_async(user_id=user, session_id=f"s-{user}", new_message=message)]
        [response] = [
            p.function_response.response for e in events for p in e.content.parts or [] if p.function_response
        ]
        assert ("bobs-deal.md" in {passage["document"] for passage in response["passages"]}) is sees_bobs, user


def test_a_long_document_shows_its_progress_while_it_is_embedded(monkeypatch):
    from cognizes.infra.embedders import get_embedder
    from knowledge_app import ingestion

    real, seen = get_embedder(), []

    class Watching:
        id = "test/watching"

        def embed_documents(self, texts):
            # What the admin and the API show at that moment.
            seen.append(Document.objects.values_list("progress", "chunks_embedded", "chunks_total").get())
            return real.embed_documents(texts)

    monkeypatch.setattr(ingestion, "get_embedder", Watching)
    corpus = Corpus.objects.create(app_name="shop", display_name="Long", chunk_size=8, chunk_overlap=0)
    data = " ".join(f"Sentence {n} is here." for n in range(160)).encode()  # 80 chunks: three batches
    document = Document.objects.create(
        corpus=corpus,
        app_name="shop",
        display_name="long.txt",
        source_uri="long.txt",
        size_bytes=len(data),
        content_hash=hashlib.sha256(data).hexdigest(),
        content=data,
    )
    assert do_ingest(document.id) == "80 chunks"
    assert {total for _, _, total in seen} == {80}  # known once parsed, before the first chunk is embedded
    assert seen == sorted(seen) and any(0 < percent < 100 for percent, _, _ in seen)  # it moves, and never back
    finished = Document.objects.get()
    assert (finished.progress, finished.chunks_embedded, finished.chunks_total) == (100, 80, 80)


def test_a_scope_large_enough_for_the_index_finds_what_the_exact_scan_finds(monkeypatch):
    from knowledge_app import search

    corpus = _indexed_handbook("shop")
    question = "How many days of paid leave do I get?"
    exact = [hit.chunk_id for hit in search.search_chunks(app_name="shop", corpus_ids=[corpus.id], query=question)]
    monkeypatch.setattr(search, "HNSW_FROM_CHUNKS", 1)  # this small corpus searched as a large one is
    for mode in ("vector", "hybrid"):
        through_index = search.search_chunks(app_name="shop", corpus_ids=[corpus.id], query=question, mode=mode)
        assert "25 days of paid leave" in through_index[0].text, mode
    assert [
        hit.chunk_id for hit in search.search_chunks(app_name="shop", corpus_ids=[corpus.id], query=question)
    ] == exact

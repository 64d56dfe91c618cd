"""Vertex AI RAG Engine through Google's own agentplatform SDK (2.6.0), pointed at Cognizes: corpora, resumable
uploads indexed by a real worker, files, ``retrieve_contexts``, in express and project mode."""

from __future__ import annotations

import json
import time

import agentplatform
import httpx
import pytest
from google.adk.agents import LlmAgent
from google.adk.runners import InMemoryRunner
from google.genai import types
from google.genai.errors import ClientError
from google.oauth2.credentials import Credentials

from cognizes.vertex import VertexAiRagRetrieval
from knowledge_app.models import Document
from tests.fake_llm import ScriptedLlm
from tests.knowledge.test_api import HANDBOOK
from tests.polling import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def _active(rag, name: str, timeout: float = 180):
    deadline = time.monotonic() + timeout
    while True:
        found = rag.get_file(name=name)
        state = found.file_status.state if found.file_status else None
        if (state and str(getattr(state, "value", state)) in ("ACTIVE", "ERROR")) or time.monotonic() > deadline:
            return found
        time.sleep(0.3)


def test_a_corpus_is_created_filled_by_upload_and_searched_through_the_sdk(rag, celery_worker, tmp_path):
    corpus = rag.create_corpus(rag_corpus={"display_name": "Handbook", "description": "For staff"})
    assert corpus.display_name == "Handbook" and corpus.name.rsplit("/", 1)[-1].isdigit()
    assert rag.get_corpus(name=corpus.name).description == "For staff"
    assert corpus.name in [c.name for c in rag.list_corpora().rag_corpora]

    path = tmp_path / "handbook.md"
    path.write_text(HANDBOOK)
    uploaded = rag.upload_file(corpus_name=corpus.name, path=str(path), display_name="Staff handbook")
    assert uploaded.display_name == "Staff handbook" and uploaded.name.startswith(corpus.name + "/ragFiles/")
    indexed = _active(rag, uploaded.name)
    assert str(getattr(indexed.file_status.state, "value", indexed.file_status.state)) == "ACTIVE"
    assert [f.name for f in rag.list_files(name=corpus.name).rag_files] == [uploaded.name]

    found = rag.retrieve_contexts(
        vertex_rag_store={"rag_resources": [{"rag_corpus": corpus.name}]},
        query={"text": "How much holiday do I get?", "similarity_top_k": 2},
    )
    contexts = found.contexts.contexts
    assert len(contexts) == 2 and "25 days of paid leave" in contexts[0].text
    assert contexts[0].source_display_name == "Staff handbook"
    only_file = rag.retrieve_contexts(
        vertex_rag_store={
            "rag_resources": [{"rag_corpus": corpus.name, "rag_file_ids": [uploaded.name.rsplit("/", 1)[-1]]}],
            "vector_distance_threshold": 0.5,
        },
        query={"text": "lost badge", "rag_retrieval_config": {"top_k": 1}},
    )
    assert [c.text for c in only_file.contexts.contexts if "badges" in c.text]

    rag.delete_file(name=uploaded.name)
    assert not Document.objects.exists()
    rag.delete_corpus(name=corpus.name)
    with pytest.raises(ClientError) as gone:
        rag.get_corpus(name=corpus.name)
    assert gone.value.code == 404


def test_another_apps_corpus_is_not_found_and_imports_are_refused_while_no_import_root_is_set(rag, server, settings):
    settings.COGNIZES_KNOWLEDGE_IMPORT_ROOT = ""
    corpus = rag.create_corpus(rag_corpus={"display_name": "Mine"})
    other = agentplatform.Client(
        api_key=server.key_for(app_name="elsewhere"), http_options={"base_url": server.base_url}
    ).rag
    with pytest.raises(ClientError) as hidden:
        other.get_corpus(name=corpus.name)
    assert hidden.value.code == 404
    reader = agentplatform.Client(
        api_key=server.key_for(read_only=True), http_options={"base_url": server.base_url}
    ).rag
    found = reader.retrieve_contexts(
        vertex_rag_store={"rag_resources": [{"rag_corpus": corpus.name}]}, query={"text": "anything"}
    )
    assert not found.contexts or found.contexts.contexts == []  # a read-only key retrieves (an empty corpus here)
    with pytest.raises(ClientError) as read_only:
        reader.create_corpus(rag_corpus={"display_name": "Not mine to make"})
    assert read_only.value.code == 403
    # agentplatform's import_files asks Google whether the bucket is the project's first: the body it sends, as it is.
    refused = httpx.post(
        f"{server.base_url}v1beta1/{corpus.name}/ragFiles:import",
        headers={"x-goog-api-key": server.key},
        json={"importRagFilesConfig": {"gcsSource": {"uris": ["gs://bucket/a.txt"]}}},
    )
    assert refused.status_code == 400 and refused.json()["error"]["status"] == "FAILED_PRECONDITION"
    assert "COGNIZES_KNOWLEDGE_IMPORT_ROOT" in refused.json()["error"]["message"]


class _RecordingLlm(ScriptedLlm):
    """Calls the retrieval tool with the user's text; keeps the tools each request declared."""

    model: str = "gemini-2.5-flash"  # ADK's own class would hand retrieval to Google's servers for this name
    tool_name: str = "search_handbook"
    argument: str = "query"
    seen: list = []

    async def generate_content_async(self, llm_request, stream=False):
        self.seen.append(llm_request.config.tools)
        async for response in super().generate_content_async(llm_request, stream):
            yield response


async def test_adks_rag_retrieval_tool_searches_a_cognizes_corpus_even_for_a_gemini_model(
    rag, server, celery_worker, tmp_path
):
    from asgiref.sync import sync_to_async

    path = tmp_path / "handbook.md"
    path.write_text(HANDBOOK)
    corpus = await sync_to_async(rag.create_corpus)(rag_corpus={"display_name": "Handbook"})
    uploaded = await sync_to_async(rag.upload_file)(corpus_name=corpus.name, path=str(path))
    await sync_to_async(_active)(rag, uploaded.name)
    mode = {"project": "my-project", "location": "us-central1"} if corpus.name.startswith("projects/") else {}
    tool = VertexAiRagRetrieval(
        name="search_handbook",
        description="Search the staff handbook.",
        rag_corpora=[corpus.name],
        similarity_top_k=2,
        base_url=server.base_url,
        api_key=server.key,
        **mode,
    )
    model = _RecordingLlm()
    runner = InMemoryRunner(agent=LlmAgent(name="helper", model=model, tools=[tool]), app_name="caller")
    session = await runner.session_service.create_session(app_name="caller", user_id="ada")
    message = types.Content(role="user", parts=[types.Part(text="How much paid leave do I get?")])

    events = [e async for e in runner.run_async(user_id="ada", session_id=session.id, new_message=message)]

    [answer] = [p.function_response.response for e in events for p in e.content.parts if p.function_response]
    assert "25 days of paid leave" in answer["result"][0]
    declared = [tool for tools in model.seen for tool in tools or []]
    assert all(tool.retrieval is None for tool in declared)  # never left to Google's servers
    assert any(d.name == "search_handbook" for tool in declared for d in tool.function_declarations or [])


def test_a_files_own_chunking_from_the_upload_config_cuts_it_and_a_bad_one_is_refused_before_the_bytes(
    rag, celery_worker, tmp_path
):
    from knowledge_app.chunking import count_tokens

    corpus = rag.create_corpus(rag_corpus={"display_name": "Handbook"})
    path = tmp_path / "handbook.md"
    path.write_text(HANDBOOK)
    config = {
        "rag_file_transformation_config": {
            "rag_file_chunking_config": {"fixed_length_chunking": {"chunk_size": 12, "chunk_overlap": 3}}
        }
    }
    uploaded = _active(
        rag, rag.upload_file(corpus_name=corpus.name, path=str(path), upload_rag_file_config=config).name
    )
    document = Document.objects.get()
    assert document.chunking == (12, 3) and uploaded.name.endswith(f"/{document.id}")
    sizes = [count_tokens(text) for text in document.chunks.values_list("text", flat=True)]
    assert len(sizes) >= 5 and max(sizes) <= 12  # the corpus's 1,024 would keep each short section whole

    with pytest.raises(ClientError) as refused:
        rag.upload_file(
            corpus_name=corpus.name,
            path=str(path),
            upload_rag_file_config={"rag_file_chunking_config": {"chunk_size": 10, "chunk_overlap": 10}},
        )
    assert refused.value.code == 400 and "chunk_overlap" in refused.value.message
    assert Document.objects.get().chunking == (12, 3)  # nothing changed


def test_retrieval_keeps_to_files_whose_metadata_match_and_says_what_it_cannot_do(rag, celery_worker, tmp_path):
    from knowledge_app import services
    from knowledge_app.models import Corpus

    corpus = rag.create_corpus(rag_corpus={"display_name": "Handbooks"})
    names = {}
    for team, year, days in (("sales", 2025, "25"), ("support", 2024, "30")):
        path = tmp_path / f"{team}.md"
        path.write_text(HANDBOOK.replace("25 days", f"{days} days"))
        names[team] = _active(rag, rag.upload_file(corpus_name=corpus.name, path=str(path), display_name=team).name)
        services.do_set_metadata(Document.objects.get(display_name=team), {"team": team, "year": year})
    assert json.loads(rag.get_file(name=names["sales"].name).user_metadata) == {"team": "sales", "year": 2025}

    def files(**config) -> set[str]:
        found = rag.retrieve_contexts(
            vertex_rag_store={"rag_resources": [{"rag_corpus": corpus.name}]},
            query={"text": "paid leave", "rag_retrieval_config": {"top_k": 10, **config}},
        )
        return {c.source_display_name for c in (found.contexts.contexts if found.contexts else None) or []}

    assert files() == {"sales", "support"}
    assert files(filter={"metadata_filter": 'team = "sales"'}) == {"sales"}
    assert files(filter={"metadata_filter": 'year > 2024 AND team != "support"'}) == {"sales"}
    assert files(filter={"metadata_filter": "year < 2000"}) == set()
    assert files(hybrid_search={"alpha": 1.0}) == {"sales", "support"}  # by meaning alone
    store = {"rag_resources": [{"rag_corpus": corpus.name, "rag_file_ids": ["999999"]}]}
    nothing = rag.retrieve_contexts(vertex_rag_store=store, query={"text": "paid leave"})
    assert not nothing.contexts or not nothing.contexts.contexts  # a file that is not there: none, not all
    for config, says in (
        ({"filter": {"metadata_filter": "team = sales OR year = 1"}}, "AND"),
        ({"ranking": {"rank_service": {"model_name": "semantic-ranker-512"}}}, "rerank"),
        ({"hybrid_search": {"alpha": 3}}, "alpha"),
    ):
        with pytest.raises(ClientError) as refused:
            files(**config)
        assert refused.value.code == 400 and says in refused.value.message, config
    assert Corpus.objects.count() == 1


def test_the_older_sdks_multipart_upload_stores_the_file_with_its_name_and_chunking(
    server, celery_worker, tmp_path, monkeypatch
):
    """python-aiplatform's ``vertexai.rag.upload_file``, unmodified but for the scheme: it hard-codes ``https://``, and
    the test server speaks HTTP, so the one POST it makes is sent to ``http://`` instead."""
    import vertexai
    from google.auth.transport import requests as google_auth_requests
    from vertexai import rag as old_rag

    from knowledge_app import services

    post = google_auth_requests.AuthorizedSession.post
    monkeypatch.setattr(
        google_auth_requests.AuthorizedSession,
        "post",
        lambda self, url, **kw: post(self, url.replace("https://", "http://", 1), **kw),
    )
    vertexai.init(
        project="my-project",
        location="us-central1",
        credentials=Credentials(token=server.key),
        api_endpoint=server.base_url.removeprefix("http://").rstrip("/"),
    )
    corpus = services.do_create_corpus(app_name="vertex_shop", display_name="Handbook")
    path = tmp_path / "handbook.md"
    path.write_text(HANDBOOK)

    uploaded = old_rag.upload_file(
        corpus_name=str(corpus.id),
        path=str(path),
        display_name="Staff handbook",
        description="For staff",
        transformation_config=old_rag.TransformationConfig(
            chunking_config=old_rag.ChunkingConfig(chunk_size=16, chunk_overlap=4)
        ),
    )

    document = Document.objects.get()
    assert uploaded.name == f"projects/my-project/locations/us-central1/ragCorpora/{corpus.id}/ragFiles/{document.id}"
    assert uploaded.display_name == document.display_name == "Staff handbook" and document.chunking == (16, 4)
    assert uploaded.description == document.description == "For staff"
    assert document.content == HANDBOOK.encode()
    with pytest.raises(ValueError):  # the SDK's word for a corpus that is not there (another app's: the same)
        old_rag.upload_file(corpus_name="999999", path=str(path))
    refused = httpx.post(
        f"{server.base_url}upload/v1/ragCorpora/{corpus.id}/ragFiles:upload",
        headers={"x-goog-api-key": server.key, "X-Goog-Upload-Protocol": "multipart"},
        files={
            "metadata": (None, "{'rag_file': {'display_name': 'x'}, 'sneaky': __import__('os')}"),
            "file": ("a.txt", b"text"),
        },
    )
    assert refused.status_code == 400 and Document.objects.count() == 1  # a literal, never code


def test_the_older_sdks_rest_clients_create_list_retrieve_and_delete(server, celery_worker):
    """python-aiplatform's ``vertexai.rag`` (API v1) on its GAPIC REST transport, which takes an ``http://``
    endpoint."""
    import vertexai
    from vertexai import rag as old_rag

    from knowledge_app import services
    from knowledge_app.models import Corpus

    vertexai.init(
        project="my-project",
        location="us-central1",
        credentials=Credentials(token=server.key),
        api_endpoint=server.base_url.rstrip("/"),
        api_transport="rest",
    )
    corpus = old_rag.create_corpus(display_name="Handbook", description="For staff")  # an operation typed for v1
    assert old_rag.get_corpus(name=corpus.name).description == "For staff"
    assert [c.display_name for c in old_rag.list_corpora()] == ["Handbook"]
    added = services.do_add_document(Corpus.objects.get(), data=HANDBOOK.encode(), filename="handbook.md")
    wait_for(lambda: Document.objects.get(id=added.document.id).status == "active", 180, "the handbook indexed")
    [listed] = old_rag.list_files(corpus_name=corpus.name)
    assert listed.display_name == "handbook.md" and old_rag.get_file(name=listed.name).name == listed.name

    found = old_rag.retrieval_query(
        rag_resources=[old_rag.RagResource(rag_corpus=corpus.name)],
        text="How much paid leave do I get?",
        rag_retrieval_config=old_rag.RagRetrievalConfig(top_k=2, filter=old_rag.Filter(vector_distance_threshold=0.9)),
    )
    assert len(found.contexts.contexts) == 2 and "25 days of paid leave" in found.contexts.contexts[0].text

    old_rag.delete_file(name=listed.name)
    old_rag.delete_corpus(name=corpus.name)
    assert not Corpus.objects.exists() and not Document.objects.exists()


def test_retrieved_scores_are_relevance_in_descending_order_within_the_distance_asked(server, celery_worker, tmp_path):
    """Issue 43 item 9: every score was 0.0 for a lone chunk (the fusion's standardised score of one candidate), and
    below 0 for the weaker of several. ``score`` is the fused relevance, larger first; ``distance`` is what
    ``vector_distance_threshold`` bounds (and ``1 - vector_similarity_threshold``), as Vertex's fields say."""
    rag = agentplatform.Client(api_key=server.key, http_options={"base_url": server.base_url}).rag
    corpus = rag.create_corpus(rag_corpus={"display_name": "Handbook"})
    path = tmp_path / "handbook.md"
    path.write_text(HANDBOOK)
    _active(rag, rag.upload_file(corpus_name=corpus.name, path=str(path), display_name="Handbook").name)
    lone = tmp_path / "lone.md"
    lone.write_text("Every employee has 25 days of paid leave a year.\n")
    alone = rag.create_corpus(rag_corpus={"display_name": "One chunk"})
    _active(rag, rag.upload_file(corpus_name=alone.name, path=str(lone), display_name="Leave").name)

    def retrieve(name: str, **config):
        found = rag.retrieve_contexts(
            vertex_rag_store={"rag_resources": [{"rag_corpus": name}]},
            query={"text": "How many days of paid leave?", "rag_retrieval_config": {"top_k": 10, **config}},
        )
        return found.contexts.contexts

    every = retrieve(corpus.name)
    distances = sorted(c.distance for c in every)
    cut = (distances[len(distances) // 2 - 1] + distances[len(distances) // 2]) / 2  # keeps about half
    near = retrieve(corpus.name, filter={"vector_distance_threshold": cut})
    similar = retrieve(corpus.name, filter={"vector_similarity_threshold": 1 - cut})
    scores = [c.score for c in every]

    assert len(every) >= 3 and "25 days" in every[0].text
    assert all(0 < score <= 1 for score in scores) and scores == sorted(scores, reverse=True) and len(set(scores)) > 1
    assert 0 < len(near) < len(every) and all(c.distance <= cut for c in near)
    assert [c.chunk.chunk_id for c in similar] == [c.chunk.chunk_id for c in near]
    assert [c.score for c in near] == sorted((c.score for c in near), reverse=True)
    assert 0 < retrieve(alone.name)[0].score <= 1

"""Vertex AI RAG Engine through Google's own agentplatform SDK (2.6.0), pointed at Cognizes: corpora, resumable
uploads indexed by a real worker, files, ``retrieve_contexts``, in express and project mode."""

from __future__ import annotations

import time

import agentplatform
import httpx
import pytest
from google.adk.agents import LlmAgent
from google.adk.runners import InMemoryRunner
from google.genai import types
from google.genai.errors import ClientError

from cognizes.vertex import VertexAiRagRetrieval
from knowledge_app.models import Document
from tests.fake_llm import ScriptedLlm
from tests.knowledge.test_api import HANDBOOK

pytestmark = pytest.mark.django_db(transaction=True)


def _active(rag, name: str, timeout: float = 60):
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

    found = rag.retrieve_contexts(vertex_rag_store={"rag_resources": [{"rag_corpus": corpus.name}]},
                                  query={"text": "How much holiday do I get?", "similarity_top_k": 2})
    contexts = found.contexts.contexts
    assert len(contexts) == 2 and "25 days of paid leave" in contexts[0].text
    assert contexts[0].source_display_name == "Staff handbook"
    only_file = rag.retrieve_contexts(
        vertex_rag_store={"rag_resources": [{"rag_corpus": corpus.name,
                                             "rag_file_ids": [uploaded.name.rsplit("/", 1)[-1]]}],
                          "vector_distance_threshold": 0.5},
        query={"text": "lost badge", "rag_retrieval_config": {"top_k": 1}})
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
    other = agentplatform.Client(api_key=server.key_for(app_name="elsewhere"),
                                 http_options={"base_url": server.base_url}).rag
    with pytest.raises(ClientError) as hidden:
        other.get_corpus(name=corpus.name)
    assert hidden.value.code == 404
    reader = agentplatform.Client(api_key=server.key_for(read_only=True),
                                  http_options={"base_url": server.base_url}).rag
    found = reader.retrieve_contexts(vertex_rag_store={"rag_resources": [{"rag_corpus": corpus.name}]},
                                     query={"text": "anything"})
    assert not found.contexts or found.contexts.contexts == []  # a read-only key retrieves (an empty corpus here)
    with pytest.raises(ClientError) as read_only:
        reader.create_corpus(rag_corpus={"display_name": "Not mine to make"})
    assert read_only.value.code == 403
    # agentplatform's import_files asks Google whether the bucket is the project's first: the body it sends, as it is.
    refused = httpx.post(f"{server.base_url}v1beta1/{corpus.name}/ragFiles:import", headers={
        "x-goog-api-key": server.key}, json={"importRagFilesConfig": {"gcsSource": {"uris": ["gs://bucket/a.txt"]}}})
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


async def test_adks_rag_retrieval_tool_searches_a_cognizes_corpus_even_for_a_gemini_model(rag, server, celery_worker,
                                                                                     tmp_path):
    from asgiref.sync import sync_to_async

    path = tmp_path / "handbook.md"
    path.write_text(HANDBOOK)
    corpus = await sync_to_async(rag.create_corpus)(rag_corpus={"display_name": "Handbook"})
    uploaded = await sync_to_async(rag.upload_file)(corpus_name=corpus.name, path=str(path))
    await sync_to_async(_active)(rag, uploaded.name)
    mode = {"project": "my-project", "location": "us-central1"} if corpus.name.startswith("projects/") else {}
    tool = VertexAiRagRetrieval(name="search_handbook", description="Search the staff handbook.",
                                rag_corpora=[corpus.name], similarity_top_k=2, base_url=server.base_url,
                                api_key=server.key, **mode)
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

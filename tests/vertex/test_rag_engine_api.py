"""The rest of RAG Engine's API through agentplatform 2.6's own ``client.rag`` and ``client.aio.rag`` (issue 44 item
8): ``update_corpus``, ``get_config`` / ``update_config``, ``ask_contexts``, and every method of the async client.

``test_every_public_method_of_the_rag_clients_is_driven`` lists what agentplatform offers, so a method a new
version adds fails here until a test drives it. The answering model of ``ask_contexts`` is the one thing
off the machine, faked by tests/model_server.py.
"""

from __future__ import annotations

import functools
import inspect

import agentplatform
import httpx
import pytest
from agentplatform._genai import _gcs_utils, _operations_utils
from agentplatform._genai.rag import AsyncRag, Rag
from google.genai import types as genai_types
from google.genai.errors import ClientError
from google.oauth2.credentials import Credentials

from knowledge_app.models import Corpus
from tests.knowledge.test_agent import _indexed_handbook
from tests.knowledge.test_api import HANDBOOK
from tests.model_server import model_servers
from tests.polling import eventually
from tests.vertex.conftest import APP, MODES
from tests.vertex.test_rag_import import _BucketsOfTheProject

pytestmark = pytest.mark.django_db(transaction=True)

MODEL = "openai/local-model"
DRIVEN = {  # each public method of agentplatform's Rag and AsyncRag: the tests that call it through the client
    "create_corpus": "test_rag_engine.py, test_the_async_client_does_all_of_it",
    "get_corpus": "test_rag_engine.py, test_a_corpus_is_renamed_and_redescribed_in_any_language, async",
    "list_corpora": "test_rag_engine.py, test_a_corpus_is_renamed_and_redescribed_in_any_language, async",
    "update_corpus": "test_a_corpus_is_renamed_and_redescribed_in_any_language, async",
    "delete_corpus": "test_rag_engine.py, test_the_async_client_does_all_of_it",
    "upload_file": "test_rag_engine.py, test_rag_memory.py, test_the_async_client_does_all_of_it",
    "import_files": "test_rag_import.py, test_the_async_client_does_all_of_it",
    "get_file": "test_rag_engine.py, test_the_async_client_does_all_of_it",
    "list_files": "test_rag_engine.py, test_the_async_client_does_all_of_it",
    "delete_file": "test_rag_engine.py, test_the_async_client_does_all_of_it",
    "retrieve_contexts": "test_rag_engine.py, test_rerank.py, test_the_async_client_does_all_of_it",
    "ask_contexts": "test_ask_contexts_*, test_the_async_client_does_all_of_it",
    "get_config": "test_the_rag_engine_config_is_the_apps_own_and_reads_back_as_set, async",
    "update_config": "test_the_rag_engine_config_is_the_apps_own_and_reads_back_as_set, async",
}


def _client(server, mode: str, key: str | None = None):
    key = key or server.key
    if mode == "express":
        return agentplatform.Client(api_key=key, http_options={"base_url": server.base_url})
    return agentplatform.Client(
        **MODES["project"], credentials=Credentials(token=key), http_options={"base_url": server.base_url}
    )


@pytest.fixture(autouse=True)
def _quick_polls(monkeypatch):
    """agentplatform polls an operation every 10 s; Cognizes' are done when returned, an import's within seconds."""
    for name in ("await_operation", "await_operation_async"):
        original = getattr(_operations_utils, name)
        monkeypatch.setattr(_operations_utils, name, functools.partial(original, poll_interval=0.2, timeout_seconds=90))


def _tool(corpus_name: str, **store) -> genai_types.Tool:
    resource = genai_types.VertexRagStoreRagResource(rag_corpus=corpus_name)
    return genai_types.Tool(
        retrieval=genai_types.Retrieval(vertex_rag_store=genai_types.VertexRagStore(rag_resources=[resource], **store))
    )


def test_every_public_method_of_the_rag_clients_is_driven():
    offered = {
        client: {name for name, _ in inspect.getmembers(client, inspect.isfunction) if not name.startswith("_")}
        for client in (Rag, AsyncRag)
    }
    assert offered[Rag] == offered[AsyncRag] == set(DRIVEN)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_corpus_is_renamed_and_redescribed_in_any_language(server, mode):
    rag = _client(server, mode).rag
    corpus = rag.create_corpus(rag_corpus={"display_name": "Handbook", "description": "For staff"})

    renamed = rag.update_corpus(
        name=corpus.name, rag_corpus={"display_name": "Manuel de l'employé — 员工手册 · 社員ハンドブック · 직원 안내서"}
    )

    assert renamed.name == corpus.name
    assert renamed.display_name == "Manuel de l'employé — 员工手册 · 社員ハンドブック · 직원 안내서"
    assert renamed.description == "For staff"  # a field left out is left as it was
    redescribed = rag.update_corpus(name=corpus.name, rag_corpus={"description": "Для сотрудников"})
    assert (redescribed.display_name, redescribed.description) == (renamed.display_name, "Для сотрудников")
    assert rag.get_corpus(name=corpus.name).description == "Для сотрудников"
    assert [c.display_name for c in rag.list_corpora().rag_corpora] == [renamed.display_name]

    for refused_update, status in [
        ({"display_name": "  "}, 400),
        ({"rag_embedding_model_config": {"vertex_prediction_endpoint": {"endpoint": "e"}}}, 400),
    ]:
        with pytest.raises(ClientError) as refused:
            rag.update_corpus(name=corpus.name, rag_corpus=refused_update)
        assert refused.value.code == status
    assert "ragEmbeddingModelConfig" in refused.value.message
    for key, status in [(server.key_for(app_name="elsewhere"), 404), (server.key_for(read_only=True), 403)]:
        with pytest.raises(ClientError) as refused:
            _client(server, mode, key).rag.update_corpus(name=corpus.name, rag_corpus={"display_name": "Not mine"})
        assert refused.value.code == status
    assert Corpus.objects.get().display_name == renamed.display_name


@pytest.mark.parametrize("mode", sorted(MODES))
def test_the_rag_engine_config_is_the_apps_own_and_reads_back_as_set(server, mode):
    rag = _client(server, mode).rag
    prefix = "projects/my-project/locations/us-central1/" if mode == "project" else ""

    first = rag.get_config()
    assert first.name == f"{prefix}ragEngineConfig" and first.rag_managed_db_config.basic is not None

    scaled = rag.update_config(updated_config={"rag_managed_db_config": {"spanner": {"scaled": {}}}})

    assert scaled.rag_managed_db_config.spanner.scaled is not None and scaled.rag_managed_db_config.basic is None
    assert rag.get_config().rag_managed_db_config.spanner.scaled is not None
    assert rag.update_config(
        updated_config={"rag_managed_db_config": {"serverless": {}}}
    ).rag_managed_db_config.serverless
    other = _client(server, mode, server.key_for(app_name="elsewhere")).rag
    assert other.get_config().rag_managed_db_config.basic is not None  # each app its own
    reader = _client(server, mode, server.key_for(read_only=True)).rag
    assert reader.get_config().rag_managed_db_config.serverless is not None
    with pytest.raises(ClientError) as refused:
        reader.update_config(updated_config={"rag_managed_db_config": {"basic": {}}})
    assert refused.value.code == 403
    for body in [{"ragManagedDbConfig": {"basic": {}, "scaled": {}}}, {"ragManagedDbConfig": {"gold": {}}}]:
        answer = httpx.patch(
            f"{server.base_url}v1beta1/{prefix}ragEngineConfig", headers={"x-goog-api-key": server.key}, json=body
        )
        assert answer.status_code == 400, answer.text
    assert rag.get_config().rag_managed_db_config.serverless is not None


@pytest.fixture
def handbook(server) -> str:
    """The handbook indexed in a corpus of the app (here, not by a worker): the corpus's name."""
    return f"ragCorpora/{_indexed_handbook(APP).id}"


@pytest.fixture
def answering(tmp_path, settings):
    """``answering(*answers)``: the stand-in model, answering in turn, configured as COGNIZES_ANSWER_MODEL."""
    with model_servers(tmp_path) as start:

        def started(*answers: tuple[int, str]):
            server = start(*answers)
            settings.COGNIZES_ANSWER_MODEL = MODEL
            settings.COGNIZES_ANSWER_MODEL_API_BASE = server.url
            settings.COGNIZES_ANSWER_MODEL_TIMEOUT_SECONDS = 10
            return server

        yield started


def test_ask_contexts_without_a_model_returns_the_contexts_and_no_answer(server, handbook, settings):
    settings.COGNIZES_ANSWER_MODEL = ""
    rag = _client(server, "express").rag
    corpus = Corpus.objects.get()
    _indexed_handbook(
        APP, "alice.md", "# Leave\n\nAlice takes 40 days of paid leave.\n", corpus=corpus, user_id="alice"
    )
    bobs = _client(server, "express", server.key_for(user_id="bob")).rag
    for_bob = bobs.ask_contexts(query={"text": "days of paid leave"}, config={"tools": [_tool(handbook)]})
    assert for_bob.contexts.contexts and not [c for c in for_bob.contexts.contexts if "Alice" in c.text]

    asked = rag.ask_contexts(
        query={"text": "How many days of paid leave?"}, config={"tools": [_tool(handbook, similarity_top_k=2)]}
    )

    assert asked.response is None  # no model here: no answer made up
    assert len(asked.contexts.contexts) == 2 and "25 days of paid leave" in asked.contexts.contexts[0].text
    assert asked.contexts.contexts[0].source_display_name == "handbook.md"


@pytest.mark.parametrize("mode", sorted(MODES))
def test_ask_contexts_answers_with_the_configured_model_from_the_contexts_found(server, handbook, answering, mode):
    model = answering((200, "每年二十五天带薪假期 [1]。"))
    rag = _client(server, mode).rag
    corpus = ("projects/my-project/locations/us-central1/" if mode == "project" else "") + handbook

    asked = rag.ask_contexts(
        query={"text": "员工每年有多少天假期？", "rag_retrieval_config": {"top_k": 3}},
        config={"tools": [_tool(corpus)]},
    )

    assert asked.response == "每年二十五天带薪假期 [1]。"
    assert len(asked.contexts.contexts) == 3
    [request] = model.requests()
    prompt = " ".join(m["content"] if isinstance(m["content"], str) else str(m["content"]) for m in request["messages"])
    assert request["model"] == "local-model" and "员工每年有多少天假期？" in prompt
    assert "员工每年享有二十五天带薪假期" in prompt and "[1]" in prompt  # the passages found, numbered

    answering((500, "down"))  # a model that is down: the contexts still, and no answer
    failed = rag.ask_contexts(query={"text": "Lost badges?"}, config={"tools": [_tool(corpus, similarity_top_k=1)]})
    assert failed.response is None and "Lost badges cost 10 euros" in failed.contexts.contexts[0].text


def test_ask_contexts_refuses_what_runs_on_googles_servers_and_names_no_corpus(server, handbook):
    rag = _client(server, "express").rag
    search = genai_types.Tool(google_search=genai_types.GoogleSearch())
    for config, said in [
        ({"tools": [_tool(handbook), search]}, "googleSearch"),
        ({"tools": []}, "ragCorpus"),
        (None, "ragCorpus"),
    ]:
        with pytest.raises(ClientError) as refused:
            rag.ask_contexts(query={"text": "leave"}, config=config)
        assert refused.value.code == 400 and said in refused.value.message
    elsewhere = _client(server, "express", server.key_for(app_name="elsewhere")).rag
    with pytest.raises(ClientError) as hidden:
        elsewhere.ask_contexts(query={"text": "leave"}, config={"tools": [_tool(handbook)]})
    assert hidden.value.code == 404
    proto_path = httpx.post(
        f"{server.base_url}v1beta1/projects/p/locations/l:askContexts",
        headers={"x-goog-api-key": server.key},
        json={
            "query": {"text": "leave"},
            "tools": [{"retrieval": {"vertexRagStore": {"ragResources": [{"ragCorpus": handbook}]}}}],
        },
    )
    assert proto_path.status_code == 200 and proto_path.json()["contexts"]["contexts"]


async def _indexed(rag, name: str) -> bool:
    state = (await rag.get_file(name=name)).file_status.state
    return str(getattr(state, "value", state)) == "ACTIVE"


@pytest.mark.parametrize("mode", sorted(MODES))
async def test_the_async_client_does_all_of_it(server, mode, celery_worker, tmp_path, settings, monkeypatch):
    monkeypatch.setattr(_gcs_utils, "GcsUtils", _BucketsOfTheProject)  # Cloud Storage's check: off the machine
    settings.COGNIZES_KNOWLEDGE_IMPORT_ROOT = str(tmp_path / "imports")
    bucket = tmp_path / "imports" / APP / "bucket"
    bucket.mkdir(parents=True)
    (bucket / "правила.txt").write_text("Сотрудники могут работать из дома по пятницам.")
    (tmp_path / "handbook.md").write_text(HANDBOOK)
    client = _client(server, mode)
    rag = client.aio.rag
    try:
        corpus = await rag.create_corpus(rag_corpus={"display_name": "Handbook"})
        assert (await rag.get_corpus(name=corpus.name)).display_name == "Handbook"
        assert [c.name for c in (await rag.list_corpora()).rag_corpora] == [corpus.name]
        assert (await rag.update_corpus(name=corpus.name, rag_corpus={"display_name": "手册"})).display_name == "手册"

        uploaded = await rag.upload_file(corpus_name=corpus.name, path=str(tmp_path / "handbook.md"))
        imported = await rag.import_files(name=corpus.name, import_config={"gcs_source": {"uris": ["gs://bucket"]}})
        assert imported.imported_rag_files_count == 1
        assert await eventually(lambda: _indexed(rag, uploaded.name), timeout=180)
        files = (await rag.list_files(name=corpus.name)).rag_files
        assert uploaded.name in [f.name for f in files] and len(files) == 2

        store = {"rag_resources": [{"rag_corpus": corpus.name}]}
        found = await rag.retrieve_contexts(vertex_rag_store=store, query={"text": "paid leave", "similarity_top_k": 1})
        assert "25 days of paid leave" in found.contexts.contexts[0].text
        asked = await rag.ask_contexts(query={"text": "работа из дома"}, config={"tools": [_tool(corpus.name)]})
        assert asked.response is None and "по пятницам" in asked.contexts.contexts[0].text

        assert (await rag.get_config()).rag_managed_db_config.basic is not None
        updated = await rag.update_config(updated_config={"rag_managed_db_config": {"enterprise": {}}})
        assert updated.rag_managed_db_config.enterprise is not None

        await rag.delete_file(name=uploaded.name)
        assert uploaded.name not in [f.name for f in (await rag.list_files(name=corpus.name)).rag_files]
        await rag.delete_corpus(name=corpus.name)
        with pytest.raises(ClientError) as gone:
            await rag.get_corpus(name=corpus.name)
        assert gone.value.code == 404
    finally:
        await client.aio.aclose()


@pytest.mark.parametrize(
    "method, path, body",
    [
        ("PATCH", "{corpus}", []),
        ("PATCH", "{corpus}", {"displayName": 5}),
        ("PATCH", "{corpus}", {"displayName": "x" * 600}),
        ("PATCH", "{corpus}", {"description": {"a": 1}}),
        ("PATCH", "{corpus}", {"vectorDbConfig": {"pinecone": {}}}),
        ("PATCH", "{corpus}", {"display_name": "a", "displayName": "b"}),
        ("PATCH", "ragEngineConfig", {"ragManagedDbConfig": "basic"}),
        ("PATCH", "ragEngineConfig", {"ragManagedDbConfig": {}}),
        ("PATCH", "ragEngineConfig", {"ragManagedDbConfig": {"basic": None}}),
        ("PATCH", "ragEngineConfig", {"ragManagedDbConfig": {"basic": {"size": 1}}}),
        ("PATCH", "ragEngineConfig", {"ragManagedDbConfig": {"spanner": {"basic": {}, "scaled": {}}}}),
        ("PATCH", "ragEngineConfig", {"ragManagedDbConfig": {"spanner": []}}),
        ("POST", ":askContexts", []),
        ("POST", ":askContexts", {"query": "leave"}),
        ("POST", ":askContexts", {"query": {"text": "leave"}, "tools": "all"}),
        ("POST", ":askContexts", {"query": {"text": "leave"}, "tools": [5]}),
        ("POST", ":askContexts", {"query": {"text": "leave"}, "tools": [{"retrieval": "corpus"}]}),
        ("POST", ":askContexts", {"query": {"text": "leave"}, "tools": [{"retrieval": {"vertexAiSearch": {}}}]}),
        ("POST", ":askContexts", {"query": {"text": "leave"}, "tools": [{"retrieval": {"vertexRagStore": "x"}}]}),
        ("POST", ":askContexts", {"query": {}, "tools": [{"retrieval": {"vertexRagStore": {"ragResources": []}}}]}),
        ("POST", ":askContexts", {"query": {"text": "leave", "similarityTopK": "all"}, "tools": "{tool}"}),
        ("POST", ":askContexts", {"query": {"text": "leave"}, "tools": "{tool}", "parentt": "p"}),
        ("POST", ":askContexts", {"query": {"text": "\u6d4b" * 100_000}, "tools": "{tool}"}),
    ],
)
def test_hostile_bodies_get_a_4xx_that_says_what_is_wrong(server, handbook, method, path, body):
    tool = [{"retrieval": {"vertexRagStore": {"ragResources": [{"ragCorpus": handbook}]}}}]
    if isinstance(body, dict) and body.get("tools") == "{tool}":
        body = {**body, "tools": tool}
    answer = httpx.request(
        method,
        f"{server.base_url}v1beta1/{path.format(corpus=handbook)}",
        headers={"x-goog-api-key": server.key},
        json=body,
    )
    assert answer.status_code == 400, answer.text  # old code: 404 and 405, the paths unserved
    assert answer.json()["error"]["message"]
    assert Corpus.objects.get().display_name == "Handbook"


def test_the_older_sdks_rest_clients_update_a_corpus_and_the_config_and_ask(server, handbook):
    """python-aiplatform's ``vertexai.rag`` (API v1, GAPIC REST) calls the same methods: update_corpus, the engine
    config and ask_contexts."""
    import vertexai
    from vertexai import rag as old_rag

    vertexai.init(
        project="my-project",
        location="us-central1",
        credentials=Credentials(token=server.key),
        api_endpoint=server.base_url.rstrip("/"),
        api_transport="rest",
    )
    name = "projects/my-project/locations/us-central1/" + handbook

    updated = old_rag.update_corpus(corpus_name=name, display_name="Manuel", description="Для сотрудников")

    assert (updated.display_name, updated.description) == ("Manuel", "Для сотрудников")
    assert Corpus.objects.get().display_name == "Manuel"
    config = "projects/my-project/locations/us-central1/ragEngineConfig"
    assert isinstance(old_rag.get_rag_engine_config(name=config).rag_managed_db_config.tier, old_rag.Basic)
    scaled = old_rag.update_rag_engine_config(
        rag_engine_config=old_rag.RagEngineConfig(
            name=config, rag_managed_db_config=old_rag.RagManagedDbConfig(tier=old_rag.Scaled())
        )
    )
    assert isinstance(scaled.rag_managed_db_config.tier, old_rag.Scaled)
    assert isinstance(old_rag.get_rag_engine_config(name=config).rag_managed_db_config.tier, old_rag.Scaled)
    asked = old_rag.ask_contexts(
        text="How many days of paid leave?", rag_resources=[old_rag.RagResource(rag_corpus=name)]
    )
    assert "25 days of paid leave" in asked.contexts.contexts[0].text and not asked.response

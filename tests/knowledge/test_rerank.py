"""The rerank stage: a model orders the fused candidates, through the native search API and Vertex's
``:retrieveContexts`` (Google's own agentplatform client).

The model is LiteLLM's, through ADK, talking to an OpenAI-compatible server process
(tests/model_server.py): the one thing outside the machine. The hits come back in
the model's order, with the fusion's score kept; a model that fails leaves the
fused order, and the native API says so on each hit.
"""

from __future__ import annotations

import html
import logging

import agentplatform
import httpx
import pytest
from google.adk.agents import LlmAgent
from google.genai import types
from google.genai.errors import ClientError

from cognizes.access.services import do_create_api_key
from cognizes.adk import runner_for
from cognizes.infra.db_threads import run_in_db_thread
from knowledge_app.rerank import parse_order
from tests.api.conftest import client_for
from tests.fake_llm import ScriptedLlm
from tests.knowledge.test_admin import _rows
from tests.knowledge.test_agent import _indexed_handbook
from tests.knowledge.test_api import _corpus
from tests.model_server import model_servers

pytestmark = pytest.mark.django_db(transaction=True)

MODEL = "openai/local-model"
POLICY = """# Staff policy

## Leave

Every employee gets 25 days of paid leave a year. Unused days of leave carry over until March.

## Sick leave

Sick leave needs a doctor's note from the third day of leave on.

## Parental leave

Parents get sixteen weeks of parental leave, paid in full.

## 休假

员工每年享有二十五天带薪假期，未休的假期可以保留到三月。

## Отпуск

Каждый сотрудник получает двадцать пять дней оплачиваемого отпуска в год.
"""


@pytest.fixture
def corpus(transactional_db) -> int:
    """A corpus of the app 'shop' holding POLICY, one section a chunk (indexed here: the worker's part is
    tests/knowledge/test_api.py's)."""
    corpus = _indexed_handbook("shop", "policy.md", POLICY)
    assert corpus.documents.get().chunk_count >= 5
    return corpus.id


@pytest.fixture
def model(tmp_path, settings):
    """``model(*answers)``: the stand-in model, answering in turn; the rerank settings point LiteLLM at it."""
    with model_servers(tmp_path) as start:

        def started(*answers: tuple[int, str]):
            server = start(*answers)
            settings.COGNIZES_RERANK_MODEL_API_BASE = server.url
            settings.COGNIZES_RERANK_MODEL_TIMEOUT_SECONDS = 10
            return server

        yield started


def search(corpus_id: int, query: str, **given) -> list[dict]:
    answer = client_for("shop").post(
        f"/api/v1/apps/shop/corpora/{corpus_id}/search/", {"query": query, **given}, format="json"
    )
    assert answer.status_code == 200, answer.json()
    return answer.json()


def prompt(request: dict) -> str:
    """The user turn LiteLLM sent (its content is a string or a list of text parts)."""
    content = next(m["content"] for m in request["messages"] if m["role"] == "user")
    return content if isinstance(content, str) else " ".join(part.get("text", "") for part in content)


def test_the_hits_come_in_the_models_order_and_the_ones_it_left_out_follow_in_fused_order(corpus, model):
    fused = search(corpus, "How many days of leave do I get?", top_k=20)
    assert len(fused) >= 5 and all(hit["rerank"] is None and hit["fused_score"] == hit["score"] for hit in fused)
    server = model((200, 'Here is my ranking:\n```json\n[3, 1, 3, 42, "x"]\n```'))

    reranked = search(corpus, "How many days of leave do I get?", top_k=3, rerank_model=MODEL)

    assert [hit["chunk_id"] for hit in reranked] == [fused[2]["chunk_id"], fused[0]["chunk_id"], fused[1]["chunk_id"]]
    assert [hit["rerank"] for hit in reranked] == ["ranked", "ranked", "unranked"]
    assert [hit["score"] for hit in reranked] == pytest.approx([1, 1 / 2, 1 / 3])
    assert [hit["fused_score"] for hit in reranked] == pytest.approx([fused[i]["score"] for i in (2, 0, 1)])
    assert [hit["vector_rank"] for hit in reranked] == [fused[i]["vector_rank"] for i in (2, 0, 1)]
    [sent] = server.requests()
    assert sent["model"] == "local-model"
    shown = prompt(sent)
    assert "How many days of leave do I get?" in shown
    positions = [shown.index(f"[{n}] (policy.md") for n in range(1, len(fused) + 1)]
    assert positions == sorted(positions)  # numbered in fused order, every candidate shown
    assert all(hit["text"][:60] in shown.split(f"[{n}] ", 1)[1] for n, hit in enumerate(fused, 1))


@pytest.mark.parametrize(
    ("answer", "order"),
    [
        ("[3, 1, 2]", [2, 0, 1]),
        ("Passage [2] answers best.\n```json\n[2, 3]\n```", [1, 2]),  # an echoed number, then the list
        ('["3", 1, true, 1.0, "²", [2], 7, 3]', [2, 0]),  # digits as strings; no booleans, floats, lists, unknowns
    ],
)
def test_the_models_answer_is_read_as_the_passages_numbers(answer, order):
    assert parse_order(answer, 3) == order


def test_the_servers_default_model_reranks_unless_a_search_says_not(corpus, model, settings):
    server = model((200, "[2, 1]"))
    settings.COGNIZES_RERANK_MODEL = MODEL
    fused = search(corpus, "parental leave", top_k=2, rerank=False)

    reranked = search(corpus, "parental leave", top_k=2)

    assert [hit["chunk_id"] for hit in reranked] == [fused[1]["chunk_id"], fused[0]["chunk_id"]]
    assert [hit["rerank"] for hit in fused] == [None, None] and len(server.requests()) == 1
    settings.COGNIZES_RERANK_MODEL, settings.COGNIZES_RERANK_MODEL_API_BASE = "no-such-model", ""
    misconfigured = search(corpus, "parental leave", top_k=2)  # the operator's mistake: searches still answer
    assert [(hit["chunk_id"], hit["rerank"]) for hit in misconfigured] == [(hit["chunk_id"], "failed") for hit in fused]


@pytest.mark.parametrize(
    "answers",
    [
        [(200, "I'm sorry, these passages all look relevant to me.")],
        [(200, "[]"), (200, '{"order": 1}')],
        [(500, "the model server is overloaded")],
    ],
    ids=["prose", "no numbers", "server error"],
)
def test_a_model_that_fails_is_asked_again_then_the_fused_order_is_returned_and_said(corpus, model, answers, caplog):
    fused = search(corpus, "sick leave", top_k=3)
    server = model(*answers)

    with caplog.at_level(logging.WARNING, logger="knowledge_app.rerank"):
        found = search(corpus, "sick leave", top_k=3, rerank_model=MODEL)

    assert [hit["chunk_id"] for hit in found] == [hit["chunk_id"] for hit in fused]
    assert [hit["score"] for hit in found] == [hit["score"] for hit in fused]
    assert {hit["rerank"] for hit in found} == {"failed"}
    assert len(server.requests()) == 2
    assert "the fused order is returned" in caplog.text


def test_chinese_and_russian_reach_the_model_intact(corpus, model):
    server = model((200, "[2, 1]"))

    found = search(corpus, "每年有多少天带薪假期？", top_k=2, rerank_model=MODEL)

    assert [hit["rerank"] for hit in found] == ["ranked", "ranked"]
    shown = prompt(server.requests()[0])
    assert "每年有多少天带薪假期？" in shown and "员工每年享有二十五天带薪假期" in shown
    assert "Каждый сотрудник получает двадцать пять дней оплачиваемого отпуска" in shown


def test_the_admins_search_box_reranks_with_the_model_named_and_says_when_it_could_not(corpus, model, admin_client):
    fused = search(corpus, "parental leave", top_k=2)
    url = f"/admin/knowledge_app/corpus/{corpus}/search/"
    asked = {"query": "parental leave", "top_k": 2, "mode": "hybrid", "rerank_model": MODEL}
    model((200, "[2, 1]"))

    page = admin_client.get(url, asked).content.decode()

    rows = [html.unescape(row) for row in _rows(page)]
    assert fused[1]["text"][:40] in rows[0] and fused[0]["text"][:40] in rows[1]
    assert f"in the order {MODEL} gave" in page and "rerank-failed" not in page
    model((500, "down"))
    failed = admin_client.get(url, asked).content.decode()
    assert 'id="rerank-failed"' in failed and fused[0]["text"][:40] in html.unescape(_rows(failed)[0])


async def test_an_agents_search_knowledge_is_reranked_by_the_servers_default_model(corpus, model, settings):
    fused = await run_in_db_thread(search, corpus, "sick leave", top_k=2)
    model((200, "[2, 1]"))
    settings.COGNIZES_RERANK_MODEL = MODEL
    agent = LlmAgent(name="helper", model=ScriptedLlm(tool_name="search_knowledge", argument="query"))
    runner = runner_for(agent, app_name="shop", knowledge=[corpus], memory="off")
    message = types.Content(role="user", parts=[types.Part(text="sick leave")])

    events = [e async for e in runner.run_async(user_id="ada", session_id="s1", new_message=message)]

    [response] = [p.function_response.response for e in events for p in e.content.parts or [] if p.function_response]
    assert [passage["text"] for passage in response["passages"][:2]] == [fused[1]["text"], fused[0]["text"]]


def test_a_rerank_that_cannot_be_done_is_a_clear_400(db, settings):
    api = client_for("shop")
    corpus_id = _corpus(api)
    url = f"/api/v1/apps/shop/corpora/{corpus_id}/search/"
    settings.COGNIZES_RERANK_MODEL = ""

    def refused(field: str, **given) -> str:
        answer = api.post(url, {"query": "leave", **given}, format="json")
        assert answer.status_code == 400, answer.json()
        return str(answer.json()["error"]["details"][field])

    assert "Name the model" in refused("rerank_model", rerank=True)
    assert "leave one out" in refused("rerank_model", rerank=False, rerank_model=MODEL)
    assert refused("rerank", rerank="perhaps")
    assert refused("rerank_model", rerank_model="")
    settings.COGNIZES_RERANK_MODEL_API_BASE = ""  # a name then goes to ADK's registry, which knows no such model
    assert "no-such-model" in refused("rerank_model", rerank_model="no-such-model")
    settings.COGNIZES_RERANK_MODELS = ["openai/approved"]
    assert "openai/approved" in refused("rerank_model", rerank_model=MODEL)


def test_vertex_llm_ranker_reranks_and_rank_service_is_refused(corpus, model, asgi_server):
    server = model((200, "[3, 2, 1]"))
    _, key = do_create_api_key(name="vertex", app_name="shop")
    rag = agentplatform.Client(api_key=key, http_options={"base_url": asgi_server + "/"}).rag
    store = {"rag_resources": [{"rag_corpus": f"ragCorpora/{corpus}"}]}
    fused = search(corpus, "carry over unused leave", top_k=20)

    found = rag.retrieve_contexts(
        vertex_rag_store=store,
        query={
            "text": "carry over unused leave",
            "rag_retrieval_config": {"top_k": 2, "ranking": {"llm_ranker": {"model_name": MODEL}}},
        },
    )

    assert [c.chunk.chunk_id for c in found.contexts.contexts] == [str(fused[2]["chunk_id"]), str(fused[1]["chunk_id"])]
    assert [c.score for c in found.contexts.contexts] == pytest.approx([1, 1 / 2])
    assert server.requests()[0]["model"] == "local-model"

    camel = httpx.post(
        f"{asgi_server}/v1beta1/:retrieveContexts",
        headers={"x-goog-api-key": key},
        json={
            "vertexRagStore": {"ragResources": [{"ragCorpus": f"ragCorpora/{corpus}"}]},
            "query": {
                "text": "carry over unused leave",
                "ragRetrievalConfig": {"topK": 1, "ranking": {"llmRanker": {"modelName": MODEL}}},
            },
        },
    )
    assert camel.status_code == 200, camel.text
    assert camel.json()["contexts"]["contexts"][0]["chunk"]["chunkId"] == str(fused[2]["chunk_id"])

    model((500, "down"))  # a reranker that is down: the fused order (Vertex's wire has no place to say it)
    failed = rag.retrieve_contexts(
        vertex_rag_store=store,
        query={
            "text": "carry over unused leave",
            "rag_retrieval_config": {"top_k": 2, "ranking": {"llm_ranker": {"model_name": MODEL}}},
        },
    )
    assert [c.chunk.chunk_id for c in failed.contexts.contexts] == [str(hit["chunk_id"]) for hit in fused[:2]]

    with pytest.raises(ClientError) as refused:
        rag.retrieve_contexts(
            vertex_rag_store=store,
            query={
                "text": "leave",
                "rag_retrieval_config": {"ranking": {"rank_service": {"model_name": "semantic-ranker-512@latest"}}},
            },
        )
    assert refused.value.code == 400 and "llm_ranker" in refused.value.message

"""A served embedding model through LiteLLM (cognizes.infra.served_embedder, issue 44 item 6): the settings name it,
texts go in batches, a rate limit or a server's fault is waited out, a model of another size is refused at once.

The provider is a stand-in HTTP server on loopback (tests/embedding_server.py), the one thing outside the machine.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from django.core.exceptions import ImproperlyConfigured

from cognizes.infra.embedders import DIMENSIONS, GeminiEmbedder, get_embedder
from cognizes.infra.served_embedder import EmbeddingUnavailable, ServedEmbedder, WrongDimensions
from tests.embedding_server import embedding_server, served, vector_of
from tests.processes import run_python

__all__ = ["served"]  # the fixture

TEXTS = [
    "Paid leave is 25 days.",
    "带薪假期有二十五天。",
    "有給休暇は25日です。",
    "연차는 25일입니다.",
    "Отпуск 25 дней.",
    "Congés payés: 25 jours, même à Noël.",
]


@pytest.mark.parametrize("speaks_base64", [True, False], ids=["base64", "floats"])
def test_the_settings_pick_a_served_model_that_embeds_in_batches_of_unit_vectors_of_the_columns_size(
    served, settings, speaks_base64
):
    server = served(speaks_base64=speaks_base64)
    settings.COGNIZES_EMBEDDING_BATCH_SIZE = 4
    get_embedder.cache_clear()
    embedder = get_embedder()
    assert isinstance(embedder, ServedEmbedder) and embedder.id == "litellm/openai/text-embedding-3-small@384"

    vectors = embedder.embed_documents(TEXTS)

    assert vectors.shape == (len(TEXTS), DIMENSIONS) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)  # the stand-in's are 3x longer or more
    assert server.inputs() == [TEXTS[:4], TEXTS[4:]]  # every script arrives as it was written
    assert {(r["model"], r["dimensions"], r["encoding_format"]) for r in server.requests} == {
        ("text-embedding-3-small", DIMENSIONS, "base64")  # 4 bytes a number, decoded at once (not 4 ms of CPU a text)
    }
    assert {h["authorization"] for h in server.headers} == {"Bearer sk-the-setting"}
    expected = np.asarray(vector_of(TEXTS[1], DIMENSIONS))
    assert np.allclose(vectors[1], expected / np.linalg.norm(expected), atol=1e-5)
    assert np.allclose(embedder.embed_query(TEXTS[1]), vectors[1], atol=1e-6)
    assert embedder.embed_documents([]).shape == (0, DIMENSIONS) and len(server.requests) == 3


def test_an_ollama_model_on_its_native_route_embeds_too(served, settings):
    server = served(native=768)
    settings.COGNIZES_EMBEDDING_MODEL = "ollama/nomic-embed-text"
    settings.COGNIZES_EMBEDDING_BASE_URL = server.url.removesuffix("/v1")  # Ollama's root, as LiteLLM takes it
    get_embedder.cache_clear()

    vectors = get_embedder().embed_documents(TEXTS[:3])

    assert vectors.shape == (3, DIMENSIONS) and np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    assert server.requests == [{"model": "nomic-embed-text", "input": TEXTS[:3], "dimensions": DIMENSIONS}]
    assert get_embedder().id == "litellm/ollama/nomic-embed-text@384"


def test_an_azure_deployment_is_reached_at_its_own_path_with_its_key_header(served, settings, monkeypatch):
    server = served()
    settings.COGNIZES_EMBEDDING_MODEL = "azure/my-embeddings"
    settings.COGNIZES_EMBEDDING_BASE_URL = server.url.removesuffix("/v1")  # the resource's endpoint
    monkeypatch.setenv("AZURE_API_VERSION", "2024-10-21")
    get_embedder.cache_clear()

    assert get_embedder().embed_query("Отпуск 25 дней.").shape == (DIMENSIONS,)
    assert server.paths == ["/openai/deployments/my-embeddings/embeddings?api-version=2024-10-21"]
    assert server.headers[0]["api-key"] == "sk-the-setting" and server.requests[0]["dimensions"] == DIMENSIONS


def test_the_providers_own_variable_is_the_key_when_no_setting_gives_one(served, settings, monkeypatch):
    server = served()
    settings.COGNIZES_EMBEDDING_API_KEY = ""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    get_embedder.cache_clear()
    get_embedder().embed_query("hello")
    assert server.headers[-1]["authorization"] == "Bearer sk-from-the-environment"


@pytest.mark.parametrize("fault", [429, 500, 503])
def test_a_rate_limit_or_a_servers_fault_is_tried_again_after_a_wait_that_doubles(served, fault):
    server = served(failures=[fault, fault])

    started = time.monotonic()
    vectors = get_embedder().embed_documents(TEXTS[:2])
    waited = time.monotonic() - started

    assert vectors.shape == (2, DIMENSIONS) and len(server.requests) == 3
    assert waited >= 0.75 * (0.05 + 0.1)  # 0.05 s, then 0.1 s, each ±25%


def test_a_retry_after_header_sets_the_wait(served):
    server = served(failures=[429], retry_after="0.6")
    started = time.monotonic()
    get_embedder().embed_query("hello")
    assert time.monotonic() - started >= 0.6 and len(server.requests) == 2


def test_after_the_last_try_the_error_says_which_model_failed_how(served, settings):
    settings.COGNIZES_EMBEDDING_MAX_RETRIES = 2
    server = served(failures=[500] * 10)
    get_embedder.cache_clear()
    with pytest.raises(EmbeddingUnavailable) as failed:
        get_embedder().embed_query("hello")
    assert len(server.requests) == 3
    message = str(failed.value)
    assert "openai/text-embedding-3-small failed 3 times" in message and "500" in message
    assert "COGNIZES_EMBEDDING_MAX_RETRIES" in message


def test_a_query_a_person_waits_on_is_tried_again_twice_at_most(served):
    server = served(failures=[500] * 10)  # COGNIZES_EMBEDDING_MAX_RETRIES: 5, for documents
    with pytest.raises(EmbeddingUnavailable, match="failed 3 times"):
        get_embedder().embed_query("hello")
    assert len(server.requests) == 3


def test_a_refusal_waiting_cannot_cure_is_not_tried_again(served):
    server = served(failures=[401])
    with pytest.raises(EmbeddingUnavailable) as refused:
        get_embedder().embed_query("hello")
    assert len(server.requests) == 1 and "refused the request (401)" in str(refused.value)


def test_a_model_answering_another_size_is_refused_at_its_first_answer_saying_what_to_do(served):
    served(native=768, honours=False)  # e.g. nomic-embed-text behind a server that cannot shorten it
    with pytest.raises(WrongDimensions) as refused:
        get_embedder().embed_documents(["hello"])
    message = str(refused.value)
    assert "openai/text-embedding-3-small answers vectors of 768 dimensions" in message
    assert "the vector columns hold 384" in message and "COGNIZES_EMBEDDING_SEND_DIMENSIONS" in message


def test_prefixes_reach_the_model_for_queries_and_documents(served, settings):
    server = served()
    settings.COGNIZES_EMBEDDING_QUERY_PREFIX = "search_query: "
    settings.COGNIZES_EMBEDDING_DOCUMENT_PREFIX = "search_document: "
    get_embedder.cache_clear()
    get_embedder().embed_query("когда отпуск?")
    get_embedder().embed_documents(["Отпуск 25 дней."])
    assert server.inputs() == [["search_query: когда отпуск?"], ["search_document: Отпуск 25 дней."]]


def test_without_a_model_the_error_names_the_setting(settings):
    settings.COGNIZES_EMBEDDING_MODEL = ""
    with pytest.raises(ImproperlyConfigured, match="COGNIZES_EMBEDDING_MODEL"):
        ServedEmbedder()


def test_building_the_embedder_imports_no_litellm_until_it_embeds():
    """LiteLLM's import takes seconds (2.8 s measured): a web process or a command that never embeds never pays it."""
    probe = (
        "import os, sys\nos.environ['COGNIZES_EMBEDDER'] = 'cognizes.infra.served_embedder.ServedEmbedder'\n"
        "os.environ['COGNIZES_EMBEDDING_MODEL'] = 'openai/x'\nimport django\n"
        "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'cognizes.settings')\ndjango.setup()\n"
        "from cognizes.infra.embedders import get_embedder\nget_embedder()\nprint('litellm' in sys.modules)"
    )
    assert run_python(probe).stdout.split()[-1] == "False"


def test_geminis_vectors_are_asked_for_at_the_columns_size(monkeypatch):
    """GeminiEmbedder asked for 768 dimensions, which the 384-d columns cannot store: every upload failed."""
    with embedding_server(native=3072) as server:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url.removesuffix("/v1"))
        monkeypatch.setenv("GOOGLE_API_KEY", "gemini-key")
        embedder = GeminiEmbedder()
        vectors = embedder.embed_documents(TEXTS[:3])
        query = embedder.embed_query(TEXTS[0])

    assert vectors.shape == (3, DIMENSIONS) and query.shape == (DIMENSIONS,)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    assert embedder.id == "gemini/gemini-embedding-001@384" and embedder.dimensions == DIMENSIONS
    assert {r.get("outputDimensionality") for body in server.requests for r in body["requests"]} == {DIMENSIONS}

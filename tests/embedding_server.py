"""A stand-in for a remote embedding API: OpenAI's ``POST /v1/embeddings``, as OpenAI, Azure, vLLM, TEI and Ollama's
OpenAI-compatible route answer it, on a loopback port in a thread of the test's process.

The provider is the one thing outside the machine the served-embedder tests fake. Its vectors are deterministic and
mean something: each word of a text adds a fixed pseudo-random direction (feature hashing), so a query finds the
chunk it shares words with, in any script. It shortens them to the ``dimensions`` asked for when it ``honours``
the parameter (OpenAI's text-embedding-3-*, a Matryoshka model), and answers with ``native`` dimensions otherwise;
its vectors are not unit-length (an unnormalised server's are not), so a test sees the client normalise them.
``failures`` is a script of statuses answered before the next successes (429 then 200, 500 then 200). It answers
Gemini's ``:batchEmbedContents`` too, for ``GeminiEmbedder`` (google-genai sends there with
``GOOGLE_GEMINI_BASE_URL`` set) and Ollama's native ``/api/embed``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from cognizes.infra.embedders import get_embedder

_WORD = re.compile(r"\w+", re.UNICODE)


def vector_of(text: str, size: int) -> list[float]:
    """The stand-in's vector of ``text``: a sum of one fixed direction per word (per character in scripts without
    spaces), scaled by 3 so it is not unit-length."""
    words = [w for token in _WORD.findall(text.lower()) for w in (token if not token.isascii() else [token])]
    total = np.zeros(size, dtype=np.float64)
    for word in words or [""]:
        seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "big")
        total += np.random.default_rng(seed).standard_normal(size)
    return [float(x) for x in 3 * total]


@dataclass
class EmbeddingServer:
    """A running stand-in: its ``/v1`` URL, what it was sent and what it answers next."""

    native: int = 1536
    honours: bool = True
    speaks_base64: bool = True
    failures: list[int] = field(default_factory=list)
    retry_after: str | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    url: str = ""

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """The status and JSON the next request gets."""
        if self.failures:
            status = self.failures.pop(0)
            kind = "rate_limit_exceeded" if status == 429 else "server_error"
            return status, {"error": {"message": f"stand-in says {status}", "type": kind, "code": kind}}
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        asked = body.get("dimensions")
        size = asked if asked and self.honours else self.native
        vectors = [vector_of(t, size) for t in texts]
        if (
            body.get("encoding_format") == "base64" and self.speaks_base64
        ):  # little-endian float32s, as OpenAI, vLLM and TEI send them
            encoded = [base64.b64encode(np.asarray(v, dtype="<f4").tobytes()).decode() for v in vectors]
            data = [{"object": "embedding", "index": i, "embedding": e} for i, e in enumerate(encoded)]
        else:
            data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
        return 200, {
            "object": "list",
            "data": data,
            "model": body.get("model", "stand-in"),
            "usage": {"prompt_tokens": len(texts), "total_tokens": len(texts)},
        }

    def gemini_answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Gemini's ``:batchEmbedContents``: each request's text, at its ``outputDimensionality`` if honoured."""
        embeddings = []
        for request in body["requests"]:
            text = " ".join(part.get("text", "") for part in request["content"]["parts"])
            asked = request.get("outputDimensionality")
            embeddings.append({"values": vector_of(text, asked if asked and self.honours else self.native)})
        return 200, {"embeddings": embeddings}

    def ollama_answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Ollama's native ``/api/embed`` (LiteLLM's ``ollama/…`` models), with the token count it reports."""
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        asked = body.get("dimensions")
        size = asked if asked and self.honours else self.native
        embeddings = [vector_of(t, size) for t in texts]
        return 200, {"model": body["model"], "embeddings": embeddings, "prompt_eval_count": len(texts)}

    def inputs(self) -> list[list[str]]:
        """The texts of each request, in order."""
        return [r["input"] if isinstance(r["input"], list) else [r["input"]] for r in self.requests]


@contextmanager
def embedding_server(**behaviour: Any) -> Iterator[EmbeddingServer]:
    """A stand-in serving on a free loopback port while the block runs."""
    stand_in = EmbeddingServer(**behaviour)
    lock = threading.Lock()

    class Embeddings(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            with lock:
                stand_in.requests.append(body)
                stand_in.headers.append({k.lower(): v for k, v in self.headers.items()})
                stand_in.paths.append(self.path)
                if self.path.partition("?")[0].rstrip("/").endswith("/embeddings"):  # OpenAI's; Azure's per deployment
                    status, payload = stand_in.answer(body)
                elif self.path == "/api/embed":
                    status, payload = stand_in.ollama_answer(body)
                elif self.path.endswith(":batchEmbedContents"):
                    status, payload = stand_in.gemini_answer(body)
                else:
                    status, payload = 404, {"error": {"message": f"no route {self.path}"}}
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if status == 429 and stand_in.retry_after is not None:
                self.send_header("Retry-After", stand_in.retry_after)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Embeddings)
    stand_in.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield stand_in
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


@pytest.fixture
def served(settings):
    """``served(**behaviour)``: a stand-in provider started, and the settings pointing ``ServedEmbedder`` at it (the
    embedder is built anew; after the test, the configured one again)."""
    with ExitStack() as servers:

        def start(**behaviour: Any) -> EmbeddingServer:
            server = servers.enter_context(embedding_server(**behaviour))
            settings.COGNIZES_EMBEDDER = "cognizes.infra.served_embedder.ServedEmbedder"
            settings.COGNIZES_EMBEDDING_MODEL = "openai/text-embedding-3-small"
            settings.COGNIZES_EMBEDDING_BASE_URL = server.url
            settings.COGNIZES_EMBEDDING_API_KEY = "sk-the-setting"
            settings.COGNIZES_EMBEDDING_RETRY_SECONDS = 0.05
            get_embedder.cache_clear()
            return server

        try:
            yield start
        finally:
            get_embedder.cache_clear()

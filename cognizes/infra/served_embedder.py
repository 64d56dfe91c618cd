"""Any embedding model a server answers for, through LiteLLM: OpenAI, Azure OpenAI, Ollama, vLLM, TEI, and the rest.

``COGNIZES_EMBEDDER = "cognizes.infra.served_embedder.ServedEmbedder"`` with ``COGNIZES_EMBEDDING_MODEL`` naming the
model as LiteLLM does (``openai/text-embedding-3-small``, ``azure/<deployment>``, ``ollama/nomic-embed-text``;
``openai/<name>`` for any OpenAI-compatible server, which vLLM, TEI and Ollama's ``/v1`` are) and
``COGNIZES_EMBEDDING_BASE_URL`` pointing at a server of your own. The key is the provider's usual variable
(``OPENAI_API_KEY``, ``AZURE_API_KEY``…) or ``COGNIZES_EMBEDDING_API_KEY``. LiteLLM because it already
ships with ADK's LiteLlm here (``cognizes.infra.models``) and speaks each provider's own wire (Azure's
deployments and API versions, Ollama's native route); it takes seconds to import, so it is imported at the
first embedding, never by loading Django.

Texts go in batches of ``COGNIZES_EMBEDDING_BATCH_SIZE`` (providers cap a request: OpenAI at 2,048 inputs, TEI
at 32 by default). A 429 or a 5xx, a timeout or a lost connection is tried again after a wait that doubles each
time (from ``COGNIZES_EMBEDDING_RETRY_SECONDS``, or what the server's ``Retry-After`` asks, within 60 s), up to
``COGNIZES_EMBEDDING_MAX_RETRIES`` times (a query at most ``QUERY_RETRIES``); then ``EmbeddingUnavailable`` says
which model failed how. Other refusals (a wrong key, an unknown model) are not tried again: waiting does not
change them. LiteLLM's own
retries (the OpenAI SDK's, which LiteLLM turns on even when asked for none) are off in this process, so a
setting of 5 is 5; the other LiteLLM callers here ask for none of their own anyway.

The vector columns hold ``DIMENSIONS`` (384): each request asks for that size (OpenAI's ``dimensions``:
text-embedding-3-* and Matryoshka models served by vLLM shorten to it), and a model that answers with
another size is refused at its first answer (``WrongDimensions``) rather than stored: a vector of another
size cannot be compared with the rest of an index. Vectors are L2-normalised here, whatever the server did.
"""

from __future__ import annotations

import base64
import logging
import os
import random
import time
import warnings
from functools import cache
from typing import Any

import numpy as np
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from cognizes.infra.embedders import DIMENSIONS, Embedder

logger = logging.getLogger(__name__)

MAX_WAIT_SECONDS = 60.0
"""The longest wait between two tries, whatever the doubling or a server's Retry-After says."""
QUERY_RETRIES = 2
"""The most tries again for a query, whatever ``COGNIZES_EMBEDDING_MAX_RETRIES`` says: a person waits on a search
(1 + 2 s of waiting, not a worker's 31 s), and a 503 saying to retry serves them better than a long silence."""
RETRIED_STATUSES = frozenset({408, 409, 429})
"""Besides every 5xx: a timeout, a conflict (OpenAI's "try again") and a rate limit pass with time."""


class EmbeddingUnavailable(RuntimeError):
    """The served model did not embed (it refused, or failed every try): what failed and what to check."""


class WrongDimensions(EmbeddingUnavailable):
    """The model answers vectors of another size than the columns hold: a setting to change, not a passing fault."""


@cache
def _litellm() -> Any:
    """LiteLLM, imported at the first embedding (2.8 s of imports: no web process or command should pay it
    before it embeds) and told to leave retries to the caller."""
    # LiteLLM fetches its model price list from GitHub when imported: not from a self-hosted server.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    # ``max_retries or DEFAULT_MAX_RETRIES`` in LiteLLM's OpenAI embedding turns "0 retries" into 2 (1.106.2):
    # this process retries itself, so LiteLLM's default goes to 0 (its documented DEFAULT_MAX_RETRIES knob).
    litellm.DEFAULT_MAX_RETRIES = 0  # type: ignore[misc]  # Final in its stubs, read at each call
    litellm.suppress_debug_info = True  # its "Give Feedback / Get Help" banner on every error
    # Its response model types an embedding as floats and warns when it holds the base64 asked for (``_vector``).
    warnings.filterwarnings(
        "ignore",
        message=r"Pydantic serializer warnings:\s+PydanticSerializationUnexpectedValue\(Expected `list\[float\]`",
    )
    return litellm


class ServedEmbedder(Embedder):
    """A model behind an HTTP API, named as LiteLLM names it; its settings are ``COGNIZES_EMBEDDING_*``."""

    dimensions = DIMENSIONS

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        batch_size: int | None = None,
        max_retries: int | None = None,
        retry_seconds: float | None = None,
        timeout: float | None = None,
        send_dimensions: bool | None = None,
        query_prefix: str | None = None,
        document_prefix: str | None = None,
    ) -> None:
        def setting(value: Any, name: str) -> Any:
            return getattr(settings, name) if value is None else value

        self.model = setting(model, "COGNIZES_EMBEDDING_MODEL").strip()
        if not self.model:
            raise ImproperlyConfigured(
                "ServedEmbedder needs COGNIZES_EMBEDDING_MODEL: a model as LiteLLM names it, e.g. "
                '"openai/text-embedding-3-small" or, with COGNIZES_EMBEDDING_BASE_URL, "openai/<served name>".'
            )
        self.base_url = setting(base_url, "COGNIZES_EMBEDDING_BASE_URL") or None
        self._api_key = setting(api_key, "COGNIZES_EMBEDDING_API_KEY") or None
        self.batch_size = max(1, int(setting(batch_size, "COGNIZES_EMBEDDING_BATCH_SIZE")))
        self.max_retries = max(0, int(setting(max_retries, "COGNIZES_EMBEDDING_MAX_RETRIES")))
        self.retry_seconds = float(setting(retry_seconds, "COGNIZES_EMBEDDING_RETRY_SECONDS"))
        self.timeout = float(setting(timeout, "COGNIZES_EMBEDDING_TIMEOUT_SECONDS"))
        self.send_dimensions = bool(setting(send_dimensions, "COGNIZES_EMBEDDING_SEND_DIMENSIONS"))
        self.query_prefix = setting(query_prefix, "COGNIZES_EMBEDDING_QUERY_PREFIX")
        self.document_prefix = setting(document_prefix, "COGNIZES_EMBEDDING_DOCUMENT_PREFIX")
        # The model and the size make the vectors; the server (a base URL, a key) does not: the same model moved to
        # another host keeps its corpora. Stored in 128-character columns (memories.embedder).
        self.id = f"litellm/{self.model}@{self.dimensions}"[:128]

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        prefixed = [self.document_prefix + text for text in texts]
        return np.concatenate(
            [self._embed(prefixed[start : start + self.batch_size]) for start in range(0, len(texts), self.batch_size)]
        )

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([self.query_prefix + text], retries=min(self.max_retries, QUERY_RETRIES))[0]

    def _embed(self, texts: list[str], *, retries: int | None = None) -> np.ndarray:
        """One request's vectors, unit-length, tried again on passing faults ``retries`` times (default: the
        setting's)."""
        retries = self.max_retries if retries is None else retries
        litellm = _litellm()
        # base64: 4 bytes a number instead of ~20 characters of JSON, decoded by numpy at once. As floats, the OpenAI
        # SDK under LiteLLM builds every number of the answer one by one: 3-4x a plain post's time for a batch
        # (bench/served_embedder.py), capping a worker below what a GPU server embeds. A server that answers
        # floats anyway (Ollama's native route) is read as it answers.
        extra: dict[str, Any] = {"encoding_format": "base64"}
        if self.send_dimensions:
            extra["dimensions"] = self.dimensions
        started = time.monotonic()
        for attempt in range(retries + 1):
            try:
                response = litellm.embedding(
                    model=self.model,
                    input=texts,
                    api_base=self.base_url,
                    api_key=self._api_key,
                    timeout=self.timeout,
                    drop_params=True,  # a provider LiteLLM knows takes no ``dimensions`` is sent none
                    **extra,
                )
                break
            except Exception as error:
                status = _status_of(error)
                if not _passing(error, status):
                    raise EmbeddingUnavailable(
                        f"The embedding model {self.model} refused the request ({status or type(error).__name__}): "
                        f"{_message_of(error)}. Check COGNIZES_EMBEDDING_MODEL, COGNIZES_EMBEDDING_BASE_URL and the "
                        "key (the provider's variable or COGNIZES_EMBEDDING_API_KEY)."
                    ) from error
                if attempt == retries:
                    raise EmbeddingUnavailable(
                        f"The embedding model {self.model} failed {attempt + 1} times over "
                        f"{time.monotonic() - started:.1f} s, last with {status or type(error).__name__}: "
                        f"{_message_of(error)}. Try again later, or raise COGNIZES_EMBEDDING_MAX_RETRIES."
                    ) from error
                wait = _wait(error, self.retry_seconds * 2**attempt)
                logger.warning(
                    "Embedding with %s: %s, try %d of %d again in %.2f s",
                    self.model,
                    status or type(error).__name__,
                    attempt + 2,
                    retries + 1,
                    wait,
                )
                time.sleep(wait)
        rows = sorted(response.data, key=lambda row: _field(row, "index"))
        vectors = [_vector(_field(row, "embedding")) for row in rows]
        if len(vectors) != len(texts):
            raise EmbeddingUnavailable(
                f"The embedding model {self.model} answered {len(vectors)} vectors for {len(texts)} texts."
            )
        sizes = {len(vector) for vector in vectors}
        if sizes != {self.dimensions}:
            raise WrongDimensions(
                f"The embedding model {self.model} answers vectors of {', '.join(map(str, sorted(sizes)))} "
                f"dimensions; the vector columns hold {self.dimensions}. Choose a model that can answer "
                f"{self.dimensions} (OpenAI's text-embedding-3-*, a Matryoshka model served by vLLM, or any "
                f"{self.dimensions}-dimension model such as multilingual-e5-small or bge-small), with "
                "COGNIZES_EMBEDDING_SEND_DIMENSIONS on so it is asked for that size."
            )
        matrix = np.stack(vectors)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.where(norms > 0, norms, 1)


def _field(row: Any, name: str) -> Any:
    """A field of one of LiteLLM's rows (a dict for some providers, an object for others)."""
    return row[name] if isinstance(row, dict) else getattr(row, name)


def _vector(embedding: Any) -> np.ndarray:
    """One answered vector: base64 of little-endian float32s (what was asked for), or a list of numbers."""
    if isinstance(embedding, str):
        return np.frombuffer(base64.b64decode(embedding), dtype="<f4").astype(np.float32)
    return np.asarray(embedding, dtype=np.float32).reshape(-1)


def _status_of(error: BaseException) -> int | None:
    status = getattr(error, "status_code", None)
    return status if isinstance(status, int) else None


def _passing(error: BaseException, status: int | None) -> bool:
    """Whether waiting may cure ``error``: a rate limit, a server's fault, a timeout, a lost connection."""
    litellm = _litellm()
    if isinstance(error, (litellm.Timeout, litellm.APIConnectionError)):
        return True
    return status is not None and (status in RETRIED_STATUSES or status >= 500)


def _wait(error: BaseException, backoff: float) -> float:
    """The server's Retry-After if it gave one, else ``backoff`` with ±25% jitter (so workers that failed together
    do not try again together), within ``MAX_WAIT_SECONDS``."""
    headers = getattr(error, "litellm_response_headers", None)  # LiteLLM's copy: its ``response`` is a stub
    asked = headers.get("retry-after") if headers is not None else None
    try:
        seconds = float(asked) if asked is not None else backoff * random.uniform(0.75, 1.25)
    except ValueError:  # an HTTP date: rare for these APIs, and the doubling serves
        seconds = backoff * random.uniform(0.75, 1.25)
    return max(0.0, min(seconds, MAX_WAIT_SECONDS))


def _message_of(error: BaseException) -> str:
    """The provider's own words, without LiteLLM's prefixes and help banners, on one line."""
    text = str(getattr(error, "message", "") or error)
    return " ".join(text.split())[:500]

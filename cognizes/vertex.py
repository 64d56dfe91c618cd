"""ADK's own Vertex AI session and memory services and RAG retrieval tool, pointed at a Cognizes server.

Agents written for Vertex AI Agent Engine change their endpoint and key, nothing else::

    from cognizes.vertex import VertexAiMemoryBankService, VertexAiRagRetrieval, VertexAiSessionService

    sessions = VertexAiSessionService(base_url="http://127.0.0.1:8000/", engine_id=ENGINE_ID, api_key=KEY)
    memory = VertexAiMemoryBankService(base_url="http://127.0.0.1:8000/", engine_id=ENGINE_ID, api_key=KEY)

    handbook = VertexAiRagRetrieval(name="search_handbook", description="Search the staff handbook.",
                                    rag_corpora=[CORPUS], base_url="http://127.0.0.1:8000/", api_key=KEY)

``ENGINE_ID`` is what ``python manage.py vertex_engine APP`` prints; ``KEY`` is a
Cognizes API key of that app (``manage.py create_api_key APP``), by default
``COGNIZES_API_KEY``. With ``project`` and ``location`` the clients use project
mode (``projects/P/locations/L/…`` paths, the key as a bearer token), else express
mode (``x-goog-api-key``). Nothing here imports Django: this is client code.

Why subclasses: Google's clients take no endpoint from the environment
(agentplatform bypasses ``GOOGLE_VERTEX_BASE_URL``), and ADK builds them in
``_build_api_client``, the hook ADK documents for custom endpoints and credentials.

For ``adk web`` / ``adk api_server``, ``register()`` adds the URI scheme
``cognizes+vertex://HOST:PORT/ENGINE_ID`` (``cognizes+vertex+https://`` over
TLS) for ``--session_service_uri`` and ``--memory_service_uri``; the key comes
from ``COGNIZES_API_KEY``.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlsplit

from google.adk.memory.vertex_ai_memory_bank_service import VertexAiMemoryBankService as _VertexAiMemoryBankService
from google.adk.sessions.vertex_ai_session_service import VertexAiSessionService as _VertexAiSessionService
from google.adk.tools.retrieval.base_retrieval_tool import BaseRetrievalTool
from google.adk.tools.retrieval.vertex_ai_rag_retrieval import VertexAiRagRetrieval as _VertexAiRagRetrieval

SCHEMES = {"cognizes+vertex": "http", "cognizes+vertex+https": "https"}


class _Endpoint:
    """Where a Cognizes server is and how to authenticate to it."""

    def __init__(self, base_url: str, api_key: str | None, project: str | None, location: str | None) -> None:
        key = api_key or os.environ.get("COGNIZES_API_KEY")
        if not key:
            raise ValueError("A Cognizes API key is needed: pass api_key= or set COGNIZES_API_KEY.")
        if bool(project) != bool(location):
            raise ValueError("Give both project and location (project mode), or neither (express mode).")
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self.api_key, self.project, self.location = key, project, location

    def client(self) -> Any:
        """An async agentplatform client on this endpoint, as ADK's services build one."""
        from google.adk.dependencies._agentplatform import agentplatform

        http_options = {"base_url": self.base_url}
        if self.project:
            from google.oauth2.credentials import Credentials

            return agentplatform.Client(
                project=self.project, location=self.location, credentials=Credentials(token=self.api_key),
                http_options=http_options,
            ).aio
        return agentplatform.Client(api_key=self.api_key, http_options=http_options).aio


class _OnCognizes:
    """What both services change: where the client goes and how it authenticates."""

    def __init__(
        self,
        *,
        base_url: str,
        engine_id: str | int,
        api_key: str | None = None,
        project: str | None = None,
        location: str | None = None,
    ) -> None:
        super().__init__(project=project, location=location, agent_engine_id=str(engine_id))  # type: ignore[call-arg]
        self._endpoint = _Endpoint(base_url, api_key, project, location)

    def _build_api_client(self) -> Any:
        return self._endpoint.client()


class VertexAiSessionService(_OnCognizes, _VertexAiSessionService):
    """ADK's ``VertexAiSessionService`` on a Cognizes server."""


class VertexAiMemoryBankService(_OnCognizes, _VertexAiMemoryBankService):
    """ADK's ``VertexAiMemoryBankService`` on a Cognizes server."""


class VertexAiRagRetrieval(_VertexAiRagRetrieval):
    """ADK's ``VertexAiRagRetrieval`` on a Cognizes server's RAG Engine (``:retrieveContexts``).

    Always a function the model calls: for a Gemini model ADK would put the corpus in
    the model request for Google's servers to search, and they cannot reach Cognizes.
    """

    def __init__(self, *, base_url: str, api_key: str | None = None, project: str | None = None,
                 location: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._endpoint = _Endpoint(base_url, api_key, project, location)

    async def process_llm_request(self, *, tool_context: Any, llm_request: Any) -> None:
        await BaseRetrievalTool.process_llm_request(self, tool_context=tool_context, llm_request=llm_request)

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        """ADK's retrieval, with the client of this endpoint (ADK builds one for Google's)."""
        from google.adk.dependencies._agentplatform import agentplatform

        query = args.get("query")
        if not isinstance(query, str):
            raise ValueError("Vertex AI RAG retrieval requires a string 'query'.")
        client = self._endpoint.client()
        try:
            response = await client.rag.retrieve_contexts(
                vertex_rag_store=self._retrieval_store(),
                query=agentplatform.types.RagQuery(text=query, similarity_top_k=self.vertex_rag_store.similarity_top_k),
            )
        finally:
            await client.aclose()
        contexts = response.contexts.contexts if response.contexts else None
        if not contexts:
            return f"No matching result found with the config: {self.vertex_rag_store}"
        return [context.text for context in contexts if context.text is not None]


def register() -> None:
    """Register ``cognizes+vertex://`` for ADK's CLI (call it from the agents directory's ``services.py``)."""
    from google.adk.cli.service_registry import get_service_registry

    registry = get_service_registry()
    for scheme in SCHEMES:
        registry.register_session_service(scheme, lambda uri, **_: VertexAiSessionService(**_from_uri(uri)))
        registry.register_memory_service(scheme, lambda uri, **_: VertexAiMemoryBankService(**_from_uri(uri)))


def _from_uri(uri: str) -> dict[str, str]:
    parts = urlsplit(uri)
    engine_id = parts.path.strip("/")
    if parts.scheme not in SCHEMES or not parts.netloc or not engine_id.isdigit() or parts.query or parts.fragment:
        raise ValueError(
            f"{uri!r}: use cognizes+vertex://HOST:PORT/ENGINE_ID (ENGINE_ID from '.venv/bin/python manage.py vertex_engine APP'; "
            "the key from COGNIZES_API_KEY)."
        )
    return {"base_url": f"{SCHEMES[parts.scheme]}://{parts.netloc}/", "engine_id": engine_id}

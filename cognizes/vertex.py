r"""ADK's own Vertex AI session and memory services and RAG retrieval tool, pointed at a Cognizes server.

Agents written for Vertex AI Agent Engine change their endpoint and key, nothing else::

    from cognizes.vertex import (VertexAiMemoryBankService, VertexAiRagMemoryService, VertexAiRagRetrieval,
                                 VertexAiSessionService)

    sessions = VertexAiSessionService(base_url="http://127.0.0.1:8000/", engine_id=ENGINE_ID, api_key=KEY)
    memory = VertexAiMemoryBankService(base_url="http://127.0.0.1:8000/", engine_id=ENGINE_ID, api_key=KEY)

    handbook = VertexAiRagRetrieval(name="search_handbook", description="Search the staff handbook.",
                                    rag_corpora=[CORPUS], base_url="http://127.0.0.1:8000/", api_key=KEY)
    rag_memory = VertexAiRagMemoryService(rag_corpus=CORPUS, base_url="http://127.0.0.1:8000/", api_key=KEY)

ADK's own classes (or any code that builds ``agentplatform.Client`` inline, as ADK's
``VertexAiRagMemoryService`` does) reach Cognizes inside ``pointed_at``, and Google outside it::

    from google.adk.memory import VertexAiRagMemoryService
    from cognizes.vertex import pointed_at

    memory = VertexAiRagMemoryService(rag_corpus=CORPUS)
    with pointed_at("http://127.0.0.1:8000/", api_key=KEY):
        await memory.add_session_to_memory(session)

``ENGINE_ID`` is what ``python manage.py vertex_engine APP`` prints; ``KEY`` is a
Cognizes API key of that app (``manage.py create_api_key APP``), by default
``COGNIZES_API_KEY``. With ``project`` and ``location`` the clients use project
mode (``projects/P/locations/L/…`` paths, the key as a bearer token), else express
mode (``x-goog-api-key``). Nothing here imports Django: this is client code.

Why subclasses: Google's clients take no endpoint from the environment
(agentplatform bypasses ``GOOGLE_VERTEX_BASE_URL``), and ADK builds them in
``_build_api_client``, the hook ADK documents for custom endpoints and credentials.

ADK's Agent Registry client finds the app's agent (as a ``RemoteA2aAgent``) and its
MCP servers (as ``McpToolset``\ s) on a Cognizes server the same way::

    from cognizes.vertex import AgentRegistry

    registry = AgentRegistry(base_url="http://127.0.0.1:8000/", api_key=KEY)
    weather = registry.get_remote_a2a_agent("projects/cognizes/locations/global/agents/weather")
    tools = registry.get_mcp_toolset("projects/cognizes/locations/global/mcpServers/weather-tools")

ADK's ``ExampleTool`` takes its few-shot examples from a Cognizes Example Store through
``VertexAiExampleStore(STORE, base_url=..., api_key=KEY)``.

ADK's code executor on Agent Engine Code Execution runs code in the server's sandboxes with one import changed::

    from cognizes.vertex import AgentEngineSandboxCodeExecutor

For ``adk web`` / ``adk api_server``, ``register()`` adds the URI scheme
``cognizes+vertex://HOST:PORT/ENGINE_ID`` (``cognizes+vertex+https://`` over
TLS) for ``--session_service_uri`` and ``--memory_service_uri``; the key comes
from ``COGNIZES_API_KEY``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any
from urllib.parse import urlsplit

import httpx
import requests
from google.adk.code_executors.agent_engine_sandbox_code_executor import (
    AgentEngineSandboxCodeExecutor as _AgentEngineSandboxCodeExecutor,
)
from google.adk.examples.example import Example
from google.adk.examples.vertex_ai_example_store import VertexAiExampleStore as _VertexAiExampleStore
from google.adk.integrations.agent_registry import AgentRegistry as _AgentRegistry
from google.adk.memory.vertex_ai_memory_bank_service import VertexAiMemoryBankService as _VertexAiMemoryBankService
from google.adk.memory.vertex_ai_rag_memory_service import VertexAiRagMemoryService as _VertexAiRagMemoryService
from google.adk.sessions.vertex_ai_session_service import VertexAiSessionService as _VertexAiSessionService
from google.adk.tools.mcp_tool import SseConnectionParams, StreamableHTTPConnectionParams
from google.adk.tools.retrieval.base_retrieval_tool import BaseRetrievalTool
from google.adk.tools.retrieval.vertex_ai_rag_retrieval import VertexAiRagRetrieval as _VertexAiRagRetrieval
from pydantic import Field

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

    def arguments(self) -> dict[str, Any]:
        """What ``agentplatform.Client`` takes to reach this endpoint."""
        http_options = {"base_url": self.base_url}
        if self.project:
            from google.oauth2.credentials import Credentials

            return {
                "project": self.project,
                "location": self.location,
                "credentials": Credentials(token=self.api_key),
                "http_options": http_options,
            }
        return {"api_key": self.api_key, "http_options": http_options}

    def client(self) -> Any:
        """An async agentplatform client on this endpoint, as ADK's services build one."""
        from google.adk.dependencies._agentplatform import agentplatform

        return agentplatform.Client(**self.arguments()).aio

    @contextmanager
    def routing(self) -> Iterator[None]:
        """Every ``agentplatform.Client`` built inside (by this task) goes to this endpoint; others are untouched."""
        _route_agentplatform_clients()
        token = _ROUTED_TO.set(self)
        try:
            yield
        finally:
            _ROUTED_TO.reset(token)


_ROUTED_TO: ContextVar[_Endpoint | None] = ContextVar("cognizes_vertex_endpoint", default=None)


def _route_agentplatform_clients() -> None:
    """Make ``agentplatform.Client`` a subclass that takes its endpoint from ``_Endpoint.routing`` when there is one.

    ADK's ``VertexAiRagMemoryService`` builds ``agentplatform.Client(project, location)`` inside its methods and
    has no hook for an endpoint, so there is no other way in short of copying them. The subclass changes nothing
    outside a ``routing()`` block: a Vertex client elsewhere in the process still goes to Google, and
    ``isinstance`` checks still pass.
    """
    from google.adk.dependencies._agentplatform import agentplatform

    if getattr(agentplatform.Client, "_routed_by_cognizes", False):
        return

    class Client(agentplatform.Client):
        _routed_by_cognizes = True

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            endpoint = _ROUTED_TO.get()
            if endpoint is not None:
                args, kwargs = (), endpoint.arguments()
            super().__init__(*args, **kwargs)

    agentplatform.Client = Client


@contextmanager
def pointed_at(
    base_url: str, *, api_key: str | None = None, project: str | None = None, location: str | None = None
) -> Iterator[None]:
    """Inside the block, every ``agentplatform.Client`` built by this task (and by tasks and ``asyncio.to_thread``
    calls it starts there) goes to the Cognizes server at ``base_url`` with ``api_key`` (else ``COGNIZES_API_KEY``);
    with ``project`` and ``location`` in project mode, else express mode.

    The seam for code that builds Google's client itself and takes no endpoint: ADK's own
    ``VertexAiRagMemoryService`` and ``VertexAiRagRetrieval.run_async``. Scoped to the block and the task (a
    context variable), so a Vertex client built anywhere else in the process still goes to Google; the classes of
    this module need no block.
    """
    with _Endpoint(base_url, api_key, project, location).routing():
        yield


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
        super().__init__(project=project, location=location, agent_engine_id=str(engine_id))  # type: ignore[call-arg]  # mixin: ADK's next
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

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None = None,
        project: str | None = None,
        location: str | None = None,
        **kwargs: Any,
    ) -> None:
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


class VertexAiRagMemoryService(_VertexAiRagMemoryService):
    """ADK's ``VertexAiRagMemoryService`` on a Cognizes server's RAG Engine.

    Each session added is a file of the corpus (its events as JSON lines, which Cognizes
    chunks in whole lines so none is lost to a cut), and a search retrieves from the
    files of the app and user asking, as ADK's service does on Google's. ``rag_corpus``
    is the corpus's name as ``create_corpus`` answered it, or its id alone.
    """

    def __init__(
        self,
        *,
        base_url: str,
        rag_corpus: str,
        api_key: str | None = None,
        project: str | None = None,
        location: str | None = None,
        similarity_top_k: int | None = None,
        vector_distance_threshold: float = 10,
    ) -> None:
        self._endpoint = _Endpoint(base_url, api_key, project, location)
        if rag_corpus.isdigit():
            rag_corpus = (f"projects/{project}/locations/{location}/" if project else "") + f"ragCorpora/{rag_corpus}"
        super().__init__(
            rag_corpus=rag_corpus,
            similarity_top_k=similarity_top_k,
            vector_distance_threshold=vector_distance_threshold,
            project=project,
            location=location,
        )

    async def add_session_to_memory(self, session: Any) -> None:
        with self._endpoint.routing():
            await super().add_session_to_memory(session)

    async def search_memory(self, *, app_name: str, user_id: str, query: str) -> Any:
        with self._endpoint.routing():
            return await super().search_memory(app_name=app_name, user_id=user_id, query=query)


class VertexAiExampleStore(_VertexAiExampleStore):
    """ADK's ``VertexAiExampleStore`` (for ``ExampleTool``) with its few-shot examples from a Cognizes Example Store.

    ADK's class builds ``agentplatform.Client(project, location)`` in every ``get_examples`` and takes no endpoint,
    so each call runs inside ``pointed_at``'s routing, to ``base_url`` with the key (issue 47 item 3). The store is
    ``exampleStores/ID`` (express mode) or ``projects/P/locations/L/exampleStores/ID`` (project mode, the key as a
    bearer token). ADK's class also needs ``pandas`` installed (agentplatform's example store client imports it).
    """

    def __init__(self, examples_store_name: str, *, base_url: str, api_key: str | None = None) -> None:
        super().__init__(examples_store_name)
        project_mode = examples_store_name.startswith("projects/")
        self._endpoint = _Endpoint(
            base_url, api_key, self._project if project_mode else None, self._location if project_mode else None
        )

    def get_examples(self, query: str) -> list[Example]:
        with self._endpoint.routing():
            return super().get_examples(query)


class AgentRegistry(_AgentRegistry):
    """ADK's ``AgentRegistry`` on a Cognizes server's Agent Registry API, with a Cognizes API key.

    ADK's client has a fixed Google URL and needs Google's default credentials in its
    constructor (``_connect``); here it connects to ``base_url`` with the key instead.
    The key goes with everything the records lead to as well: the A2A agents
    ``get_remote_a2a_agent`` builds (unless an ``httpx_client`` is given) and the MCP
    toolsets of ``get_mcp_toolset``.
    A key of the whole app acts for ``user_id``, or on MCP for the turn's user when
    none is given; a key of one user needs neither. The project and location are any
    names (Cognizes does not check them): they are in the records' names.
    """

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None = None,
        project: str = "cognizes",
        location: str = "global",
        user_id: str | None = None,
        header_provider: Any = None,
    ) -> None:
        self._endpoint = _Endpoint(base_url, api_key, project, location)
        self._user_id = user_id
        self._extra_headers = header_provider
        super().__init__(project_id=project, location=location, header_provider=self._cognizes_headers)

    def _connect(self) -> None:
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {self._endpoint.api_key}"
        self._base_url = self._endpoint.base_url + "v1"
        self._use_mtls = False
        self._credentials = None  # type: ignore[assignment]  # none: the key in the session's header is the credential
        # Last: ADK takes a session as the sign of a finished connection (a plain one: ADK calls only request()).
        self._session = session  # type: ignore[assignment]

    def _key_headers(self, user_id: str | None) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self._endpoint.api_key}"}
        if user_id:
            headers["X-User-Id"] = user_id
        return headers

    def _cognizes_headers(self, context: Any) -> dict[str, str]:
        headers = self._key_headers(self._user_id or getattr(context, "user_id", None))
        if self._extra_headers is not None:
            headers.update(self._extra_headers(context))
        return headers

    def get_mcp_toolset(
        self,
        mcp_server_name: str,
        auth_scheme: Any = None,
        auth_credential: Any = None,
        *,
        continue_uri: str | None = None,
    ) -> Any:
        """ADK's ``McpToolset`` for the record, sending this key also outside a turn (listing its tools)."""
        toolset = super().get_mcp_toolset(mcp_server_name, auth_scheme, auth_credential, continue_uri=continue_uri)
        params = toolset.connection_params
        assert isinstance(params, SseConnectionParams | StreamableHTTPConnectionParams)  # a record's server: HTTP
        params.headers = {**(params.headers or {}), **self._key_headers(self._user_id)}
        return toolset

    def get_remote_a2a_agent(
        self,
        agent_name: str,
        auth_scheme: Any = None,
        auth_credential: Any = None,
        *,
        httpx_client: httpx.AsyncClient | None = None,
        continue_uri: str | None = None,
    ) -> Any:
        """ADK's ``RemoteA2aAgent`` for the record, calling the agent with this key (and ``user_id``)."""
        if httpx_client is None and auth_scheme is None:
            httpx_client = httpx.AsyncClient(headers=self._key_headers(self._user_id), timeout=httpx.Timeout(600.0))
        return super().get_remote_a2a_agent(
            agent_name, auth_scheme, auth_credential, httpx_client=httpx_client, continue_uri=continue_uri
        )


class AgentEngineSandboxCodeExecutor(_AgentEngineSandboxCodeExecutor):
    """ADK's code executor on Agent Engine Code Execution, running code in a Cognizes server's sandboxes.

    ADK's class takes no endpoint (it builds ``agentplatform.Client(project, location)`` in ``_get_api_client`` on
    every call), so this one overrides that method and is otherwise ADK's: an agent moves by changing its import::

        from cognizes.vertex import AgentEngineSandboxCodeExecutor

        agent = LlmAgent(..., code_executor=AgentEngineSandboxCodeExecutor(
            agent_engine_resource_name=f"projects/p/locations/us-central1/reasoningEngines/{ENGINE_ID}",
            base_url="http://127.0.0.1:8000/", api_key=KEY))

    ``base_url`` defaults to ``COGNIZES_URL`` (else ``http://127.0.0.1:8000/``), ``api_key`` to ``COGNIZES_API_KEY``.
    Each session gets a sandbox of its own (its name kept in the session's state), as with ADK's class.
    """

    base_url: str | None = None
    api_key: str | None = Field(default=None, repr=False)

    def _get_api_client(self) -> Any:
        from google.adk.dependencies._agentplatform import agentplatform

        endpoint = _Endpoint(
            self.base_url or os.environ.get("COGNIZES_URL") or "http://127.0.0.1:8000/",
            self.api_key,
            self._project_id or "cognizes",
            self._location or "us-central1",
        )
        return agentplatform.Client(**endpoint.arguments())


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
            f"{uri!r}: use cognizes+vertex://HOST:PORT/ENGINE_ID (ENGINE_ID from 'cognizes vertex_engine APP'; "
            "the key from COGNIZES_API_KEY)."
        )
    return {"base_url": f"{SCHEMES[parts.scheme]}://{parts.netloc}/", "engine_id": engine_id}

"""Google's Agent Registry API (``agentregistry.googleapis.com/v1``), read-only, over what Cognizes serves.

ADK for Python's ``AgentRegistry`` and ADK for Go's ``agentregistry`` discover remote
agents and MCP servers here (``../shared/agent-registry-wire.md``): they list and get
``projects/{p}/locations/{l}/agents`` and ``…/mcpServers`` (paged, filtered), and
read ``…/bindings``. The records are of the caller's key's app, as RAG Engine's
corpora are (the project and location are taken as given; a key never sees another
app's records, which are 404 like records that do not exist):

* its agent, if ``COGNIZES_AGENTS`` serves one: the record embeds the very A2A card
  ``/a2a/{app}/.well-known/agent-card.json`` serves (``card``), and lists the A2A
  endpoint under ``protocols`` too, for clients that build their own card; an app
  with a Vertex engine names it as the agent's runtime (``attributes``), which is
  how ADK for Python finds the record of the deployment it runs in;
* its MCP servers, from ``MCP_SERVER_SOURCES``: the app's tool registry at
  ``/mcp/{app}/``, with the tools ``tools/list`` answers, then the external MCP
  servers it registered as rows (``tools_app.mcp_servers``); another kind of record
  is one ``mcp_server_source(fn)`` call.

Bindings (which auth provider a client should use) and endpoints (models) have none:
the key a client already sends is what Cognizes' agents and MCP servers take.
Nothing here decides what exists; runtime_app serves the agents and MCP servers,
this module writes them as Google's records.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from asgiref.sync import async_to_sync
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.response import Response

from cognizes.access.api import check_scope, check_url
from cognizes.access.models import ApiKey
from cognizes.infra.db_threads import run_in_db_thread
from runtime_app.a2a import card_of
from runtime_app.agents import registered_apps
from runtime_app.mcp import PREFIX as MCP_PREFIX
from runtime_app.mcp import listed_tools
from tools_app.mcp_servers import offered_mcp_servers
from tools_app.models import McpTransport
from vertex_app import errors, names, registry_filters, wire
from vertex_app.base import VertexSurface, page
from vertex_app.services import find_engine

Record = dict[str, Any]
RUNTIME_REFERENCE = "agentregistry.googleapis.com/system/RuntimeReference"
"""The attribute naming where an agent runs; ADK for Python filters on its ``uri`` to find its own deployment."""
AGENT_FIELDS = {
    "name",
    "agentId",
    "displayName",
    "description",
    "version",
    "location",
    "protocols",
    "skills",
    "card",
    "attributes",
}
MCP_SERVER_FIELDS = {"name", "mcpServerId", "displayName", "description", "interfaces", "tools", "attributes"}
BINDING_FIELDS = {"name", "bindingId", "displayName", "description", "source", "target", "authProviderBinding"}
ENDPOINT_FIELDS = {"name", "endpointId", "displayName", "description", "interfaces", "attributes"}
_SEARCH = {
    "search_string": None,
    "search_type": None,
    "filter": None,
    "order_by": None,
    "page_size": None,
    "page_token": None,
}


@dataclass(frozen=True)
class Place:
    """Whose records, under which name, reached at which URL."""

    app_name: str
    project: str
    location: str
    base_url: str
    """The server's URL as the caller reached it (``http://host:port/``): the records' endpoints are under it."""

    @property
    def parent(self) -> str:
        return f"projects/{self.project}/locations/{self.location}"


McpServerSource = Callable[[Place], Awaitable[list[Record]]]
"""Something that gives MCP-server records of an app (in Google's JSON, ``mcpServerId`` unique within the app)."""


async def app_tool_registry(place: Place) -> list[Record]:
    """The app's tool registry, served as an MCP server at ``/mcp/{app}/``."""
    server_id = f"{place.app_name}-tools"
    url = place.base_url.rstrip("/") + f"{MCP_PREFIX}{place.app_name}/"
    tools = [
        tool.model_dump(by_alias=True, exclude_none=True, include={"name", "description", "annotations"})
        for tool in await listed_tools(place.app_name)
    ]
    return [
        {
            "name": f"{place.parent}/mcpServers/{server_id}",
            "mcpServerId": server_id,
            "displayName": place.app_name,
            "description": f"The tool registry of app {place.app_name}: every call runs as an agent's would, audited.",
            "interfaces": [{"url": url, "protocolBinding": "JSONRPC"}],
            "tools": tools,
        }
    ]


async def external_mcp_servers(place: Place) -> list[Record]:
    """The external MCP servers the app registered as rows (``tools_app.McpServer``), enabled, at their own URLs,
    with the tools (allowed to the app's agents) they listed last. Headers and secrets stay Cognizes'; SSE
    servers are left out, since the records' bindings (JSONRPC, HTTP_JSON, GRPC) name no SSE transport."""
    servers = await run_in_db_thread(offered_mcp_servers, app_name=place.app_name)
    return [
        {
            "name": f"{place.parent}/mcpServers/{place.app_name}-mcp-{server['name']}",
            "mcpServerId": f"{place.app_name}-mcp-{server['name']}",
            "displayName": server["name"],
            "description": server["description"],
            "interfaces": [{"url": server["url"], "protocolBinding": "JSONRPC"}],
            "tools": [{"name": tool["name"], "description": tool.get("description", "")} for tool in server["tools"]],
        }
        for server in servers
        if server["transport"] == McpTransport.STREAMABLE_HTTP
    ]


MCP_SERVER_SOURCES: list[McpServerSource] = [app_tool_registry, external_mcp_servers]


def mcp_server_source(source: McpServerSource) -> McpServerSource:
    """Add a source of MCP-server records (usable as a decorator): its records are listed after those before it."""
    MCP_SERVER_SOURCES.append(source)
    return source


async def mcp_servers(place: Place) -> list[Record]:
    """The app's MCP-server records, source by source (the app's own registry first)."""
    return [record for source in MCP_SERVER_SOURCES for record in await source(place)]


async def agents(place: Place) -> list[Record]:
    """The app's agent as a record, if one is served (``COGNIZES_AGENTS``)."""
    if place.app_name not in registered_apps():
        return []
    card = await card_of(place.app_name, place.base_url)
    engine = await run_in_db_thread(find_engine, place.app_name)
    [interface, *_] = card["supportedInterfaces"]
    record: Record = {
        "name": f"{place.parent}/agents/{place.app_name}",
        "agentId": place.app_name,
        "displayName": card["name"],
        "description": card.get("description", ""),
        "version": card.get("version", ""),
        "location": place.location,
        "protocols": [
            {
                "type": "A2A_AGENT",
                "protocolVersion": interface.get("protocolVersion", "1.0"),
                "interfaces": [{"url": interface["url"], "protocolBinding": interface["protocolBinding"]}],
            }
        ],
        "skills": [
            {key: skill[key] for key in ("id", "name", "description", "tags", "examples") if key in skill}
            for skill in card.get("skills", [])
        ],
        "card": {"type": "A2A_AGENT_CARD", "content": card},
    }
    if engine is not None:
        runtime = names.engine(engine.engine_id, project=place.project, location=place.location)
        record["attributes"] = {RUNTIME_REFERENCE: {"uri": f"//aiplatform.googleapis.com/{runtime}"}}
    return [record]


class RegistryView(VertexSurface):
    """A path of the Agent Registry: the records of the caller's key's app."""

    place: Place

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        check_url(request, kwargs)
        if not isinstance(request.auth, ApiKey):
            raise exceptions.NotAuthenticated("The Agent Registry takes a Cognizes API key.")
        check_scope(request, request.auth.app_name, None, write=False)  # every call reads (a search is a POST)
        self.place = Place(
            app_name=request.auth.app_name,
            project=kwargs["project"],
            location=kwargs["location"],
            base_url=request.build_absolute_uri("/"),
        )

    def listing(self, records: list[Record], field: str, fields: set[str], query: Any = None) -> Response:
        """One page of the records the ``filter`` keeps, as Google's lists answer."""
        query = self.request.query_params if query is None else query
        keep = registry_filters.parse(wire.string(query.get("filter"), "filter"), fields=fields)
        return Response(page(self.request, [r for r in records if keep(r)], field, lambda record: record, query=query))

    def search(self, records: list[Record], field: str, fields: set[str]) -> Response:
        """The records holding every word of ``searchString`` (a keyword search; SEMANTIC is answered the same way)."""
        body = wire.message(self.request.data, _SEARCH)
        words = wire.string(body.get("search_string"), "searchString").casefold().split()
        found = [record for record in records if all(word in _searchable(record) for word in words)]
        return self.listing(
            found,
            field,
            fields,
            query={
                "filter": body.get("filter"),
                "pageSize": body.get("page_size"),
                "pageToken": body.get("page_token"),
            },
        )

    def one(self, records: list[Record], kind: str, record_id: str) -> Response:
        name = f"{self.place.parent}/{kind}/{record_id}"
        found = next((record for record in records if record["name"] == name), None)
        if found is None:
            raise errors.NotFound(f"{name} does not exist.")
        return Response(found)


def _searchable(record: Record) -> str:
    """What a keyword search looks in: the names and descriptions of the record and of its skills or tools."""
    parts = [record.get("displayName", ""), record.get("description", ""), record["name"].rpartition("/")[2]]
    for item in [*record.get("skills", []), *record.get("tools", [])]:
        parts += [item.get("name", ""), item.get("description", "")]
    return " ".join(parts).casefold()


class AgentsView(RegistryView):
    def get(self, request: Request, **kwargs: Any) -> Response:
        """List the agents (A2A), each with the agent card it serves; a page at a time, filtered."""
        return self.listing(async_to_sync(agents)(self.place), "agents", AGENT_FIELDS)


class AgentView(RegistryView):
    def get(self, request: Request, agent_id: str, **kwargs: Any) -> Response:
        """Read an agent's record, its A2A card embedded."""
        return self.one(async_to_sync(agents)(self.place), "agents", agent_id)


class SearchAgentsView(RegistryView):
    def post(self, request: Request, **kwargs: Any) -> Response:
        """Search the agents by keyword (name, description, skills): {"searchString", "filter", "pageSize"}."""
        return self.search(async_to_sync(agents)(self.place), "agents", AGENT_FIELDS)


class McpServersView(RegistryView):
    def get(self, request: Request, **kwargs: Any) -> Response:
        """List the MCP servers (each app's tool registry), with their tools; a page at a time, filtered."""
        return self.listing(async_to_sync(mcp_servers)(self.place), "mcpServers", MCP_SERVER_FIELDS)


class SearchMcpServersView(RegistryView):
    def post(self, request: Request, **kwargs: Any) -> Response:
        """Search the MCP servers by keyword (name, description, tools): {"searchString", "filter", "pageSize"}."""
        return self.search(async_to_sync(mcp_servers)(self.place), "mcpServers", MCP_SERVER_FIELDS)


class McpServerView(RegistryView):
    def get(self, request: Request, server_id: str, **kwargs: Any) -> Response:
        """Read an MCP server's record: its streamable HTTP endpoint and tools."""
        return self.one(async_to_sync(mcp_servers)(self.place), "mcpServers", server_id)


class BindingsView(RegistryView):
    def get(self, request: Request, **kwargs: Any) -> Response:
        """List the bindings of auth providers: none, as Cognizes' agents and tools take the caller's key."""
        return self.listing([], "bindings", BINDING_FIELDS)


class AvailableBindingsView(RegistryView):
    def get(self, request: Request, **kwargs: Any) -> Response:
        """The bindings available to a deployed agent (bindings:fetchAvailable): none."""
        return self.listing([], "bindings", BINDING_FIELDS)


class EndpointsView(RegistryView):
    def get(self, request: Request, **kwargs: Any) -> Response:
        """List the model endpoints: none are registered here."""
        return self.listing([], "endpoints", ENDPOINT_FIELDS)


class EndpointView(RegistryView):
    def get(self, request: Request, endpoint_id: str, **kwargs: Any) -> Response:
        """Read a model endpoint: none are registered here, so always 404."""
        return self.one([], "endpoints", endpoint_id)

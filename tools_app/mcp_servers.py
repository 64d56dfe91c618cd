"""The rules of external MCP server rows (``McpServer``): the admin, the API and ``DatabaseToolset`` call these.

A server is a registry row like a tool: every write bumps its version and the
app's ``ToolRegistryMarker`` in one transaction, so running agents rebuild
their ``McpToolset`` for it on their next model turn. What the server last
listed is kept on the row (``discovered_tools``), so people (and the Agent
Registry) see its tools without asking it, and agents keep them while the
server is briefly down.

    servers = offered_mcp_servers(app_name="travel")   # [{"name", "url", "description", "tools": [...]}, ...]
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.db import IntegrityError, transaction
from django.utils import timezone

from tools_app.models import MAX_NAME_LENGTH, McpServer, McpTransport, Tool
from tools_app.secret_headers import HEADER_NAME, check_secret_auth, load_secret_headers
from tools_app.services import (
    NAME_PATTERN,
    InvalidTool,
    ToolExists,
    bump_marker,
    get_enabled_tools,
    refuse_unknown_fields,
    save_new_version,
)

EDITABLE_FIELDS = (
    "name",
    "description",
    "url",
    "transport",
    "headers",
    "allowed_tools",
    "denied_tools",
    "tool_name_prefix",
    "enabled",
    "requires_approval",
    "auth_scheme",
    "auth_secret_source",
    "auth_secret_name",
    "auth_header_name",
    "timeout_seconds",
    "list_cache_seconds",
)
MAX_TIMEOUT_SECONDS = 600.0
_RESERVED_HEADERS = {"content-type", "content-length", "accept", "host", "mcp-session-id", "mcp-protocol-version"}
"""Headers the MCP transport sets itself: a row overriding them would break the protocol, not configure it."""


def _check_names(value: Any, errors: dict[str, str], field: str) -> None:
    if not isinstance(value, list) or not all(isinstance(name, str) and name for name in value):
        errors[field] = "A list of the server's tool names."


def _check_headers(value: Any, errors: dict[str, str]) -> None:
    if not isinstance(value, dict):
        errors["headers"] = 'An object of header names and values, e.g. {"X-Tenant": "acme"}.'
        return
    for name, header_value in value.items():
        if not isinstance(name, str) or not HEADER_NAME.match(name) or name.lower() in _RESERVED_HEADERS:
            errors["headers"] = f"{name!r} is not a header a row may set."
        elif name.lower() == "authorization":
            errors["headers"] = (
                "Authorization carries a credential: store it as a secret of the app and set "
                "auth_scheme 'bearer' and auth_secret_name to its name."
            )
        elif not isinstance(header_value, str) or any(c in header_value for c in "\r\n\0"):
            errors["headers"] = f"The value of {name!r} must be text on one line."


def check_mcp_server(server: McpServer) -> None:
    """Validate ``server``; raise ``InvalidTool`` listing every problem (nothing is saved then)."""
    errors: dict[str, str] = {}
    if not isinstance(server.name, str) or not NAME_PATTERN.match(server.name) or len(server.name) > MAX_NAME_LENGTH:
        errors["name"] = f"Letters, digits and underscores, not starting with a digit, at most {MAX_NAME_LENGTH}."
    url = urlsplit(server.url if isinstance(server.url, str) else "")
    if url.scheme not in ("http", "https") or not url.hostname:
        errors["url"] = "An http:// or https:// URL of the server's MCP endpoint."
    if server.transport not in McpTransport.values:
        errors["transport"] = f"One of {', '.join(McpTransport.values)} (no stdio: a row never runs a command)."
    _check_headers(server.headers, errors)
    _check_names(server.allowed_tools, errors, "allowed_tools")
    _check_names(server.denied_tools, errors, "denied_tools")
    if server.tool_name_prefix and not NAME_PATTERN.match(server.tool_name_prefix):
        errors["tool_name_prefix"] = "Letters, digits and underscores, not starting with a digit."
    check_secret_auth(server, errors, app_name=server.app_name)
    if not isinstance(server.timeout_seconds, (int, float)) or not 0 < server.timeout_seconds <= MAX_TIMEOUT_SECONDS:
        errors["timeout_seconds"] = f"Positive, at most {MAX_TIMEOUT_SECONDS:g}."
    if not isinstance(server.list_cache_seconds, (int, float)) or server.list_cache_seconds < 0:
        errors["list_cache_seconds"] = "Zero or more."
    if errors:
        raise InvalidTool(errors)


def do_create_mcp_server(*, app_name: str, actor: str = "", **fields: Any) -> McpServer:
    """Register an external MCP server; the app's agents get its tools on their next model turn."""
    refuse_unknown_fields(fields, EDITABLE_FIELDS)
    server = McpServer(app_name=app_name, **fields)
    check_mcp_server(server)
    try:
        with transaction.atomic():
            server.save()
            bump_marker(app_name)
    except IntegrityError as e:
        raise ToolExists(f"App {app_name!r} already has an MCP server named {server.name!r}.") from e
    return server


def do_update_mcp_server(
    server: McpServer,
    *,
    changes: dict[str, Any],
    actor: str = "",
    expected_version: int | None = None,
) -> McpServer:
    """Change a server row and bump its version; with ``expected_version``, refuse if someone changed it first."""
    refuse_unknown_fields(changes, EDITABLE_FIELDS)
    for name, value in changes.items():
        setattr(server, name, value)
    check_mcp_server(server)
    try:
        with transaction.atomic():
            save_new_version(
                server, what="MCP server", expected_version=expected_version, then=lambda: bump_marker(server.app_name)
            )
    except IntegrityError as e:
        raise ToolExists(f"App {server.app_name!r} already has an MCP server named {server.name!r}.") from e
    return server


def do_delete_mcp_server(server: McpServer, *, actor: str = "") -> None:
    """Remove a server row; agents stop getting its tools on their next model turn."""
    with transaction.atomic():
        server.delete()
        bump_marker(server.app_name)


def do_set_mcp_servers_enabled(servers: Any, *, enabled: bool, actor: str = "") -> int:
    """Switch servers on or off; return how many changed."""
    changed = 0
    for server in servers:
        if server.enabled != enabled:
            do_update_mcp_server(server, changes={"enabled": enabled}, actor=actor)
            changed += 1
    return changed


def do_record_discovered_tools(*, server_id: int, version: int, tools: list[dict[str, Any]]) -> None:
    """Keep what the server listed on its row, unless the row changed since (its new toolset lists again).

    Not a change of the row: the version and the marker stay, no agent rebuilds.
    """
    McpServer.objects.filter(pk=server_id, version=version).update(discovered_tools=tools, discovered_at=timezone.now())


def get_enabled_mcp_servers(*, app_name: str) -> list[McpServer]:
    return list(McpServer.objects.enabled().filter(app_name=app_name))


def get_enabled_registry(*, app_name: str) -> tuple[int, list[Tool], list[McpServer]]:
    """The registry version, the app's enabled tools and its enabled MCP servers (the version read first,
    as ``services.get_enabled_tools`` says why), each with its ``secret_headers`` resolved."""
    version, tools = get_enabled_tools(app_name=app_name)
    servers = get_enabled_mcp_servers(app_name=app_name)
    load_secret_headers([*tools, *servers])
    return version, tools, servers


def describe(server: McpServer) -> dict[str, Any]:
    """A server as a directory lists it: where it is and the tools agents get of it (as it listed them last,
    under the server's own names; Cognizes' agents see them behind ``tool_name_prefix``)."""
    return {
        "name": server.name,
        "url": server.url,
        "transport": server.transport,
        "description": server.description,
        "enabled": server.enabled,
        "version": server.version,
        "discovered_at": server.discovered_at,
        "tool_name_prefix": server.tool_name_prefix,
        "tools": [
            tool for tool in server.discovered_tools if isinstance(tool, dict) and server.offers(tool.get("name", ""))
        ],
    }


def offered_mcp_servers(*, app_name: str) -> list[dict[str, Any]]:
    """The app's enabled external MCP servers, described (for the Agent Registry's ``mcpServers``)."""
    return [describe(server) for server in get_enabled_mcp_servers(app_name=app_name)]

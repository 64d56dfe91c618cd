"""MCP: every app's tool registry is a Model Context Protocol server, beside A2A.

    POST /mcp/{app}/    JSON-RPC over MCP's Streamable HTTP: initialize, ping, tools/list, tools/call

Beside the registry's tools it offers the caller's user's memory (``runtime_app.mcp_memory``: remember, search,
list, forget); their names are the memory's, so a registry tool of the same name is not listed here.

The protocol is the official ``mcp`` SDK's (its low-level ``Server`` and
Streamable HTTP session manager), run stateless with JSON answers so that any
web process answers any request (``make run`` starts several). This module only
translates: the tools are the ones agents get and a call takes their path
(``tools_app.direct``: secrets, timeouts, approvals, the audit row), and the
caller is checked by ``cognizes.access.callers`` as on A2A:

* ``Authorization: Bearer <key>`` of the URL's app (401 without, 404 for
  another app's key); any key may list, a read-only one may not call (403) but the memory tools that only read;
* a call acts for the key's user, or for an app-wide key the ``X-User-Id``
  header's (400 without it, in ``cognizes.access.key_kinds``' words: the header, or a key of one user).

A refusal after the body is read carries the call's JSON-RPC id (Go's MCP client needs it to read the error).

``GET`` (a stream of server messages, which a stateless server never sends)
and ``DELETE`` (no session to end) answer 405. Bodies are bounded by
``cognizes.access.body_limit`` like every surface's (413).
"""

from __future__ import annotations

import asyncio
import json
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.exceptions import MCPError
from starlette.requests import Request
from starlette.responses import Response

from cognizes.access.body_limit import replay
from cognizes.access.callers import Refused, authenticate_caller
from cognizes.infra.db_threads import run_in_db_thread
from runtime_app import mcp_memory
from runtime_app.a2a import call_id_of, error_body, outage_refusal, refusal
from tools_app import direct
from tools_app.services import InvalidArguments

PREFIX = "/mcp/"
SCOPE_KEY = "cognizes.mcp"
"""Where the branch leaves the authenticated caller in the ASGI scope for the handlers."""

__all__ = ["PREFIX", "McpApplication", "error_body", "listed_tools"]


def _caller(ctx: ServerRequestContext[Any, Request]) -> direct.Caller:
    """The caller the branch authenticated, with the client as the audit names it."""
    request = ctx.request
    assert request is not None  # over HTTP every request has one
    app_name, user_id = request.scope[SCOPE_KEY]
    params = ctx.session.client_params
    client = (
        f"{params.client_info.name}/{params.client_info.version}"
        if params is not None
        else request.headers.get("user-agent", "unknown")
    )
    return direct.Caller(
        app_name=app_name,
        user_id=user_id,
        client=f"{client} (MCP {ctx.protocol_version})"[:255],
        call_id=str(ctx.request_id or ""),
    )


def _describe(tool: Any) -> types.Tool:
    """An ADK registry tool as MCP lists it: its schema as the model sees it, and hints from its HTTP method."""
    schema = dict(getattr(tool, "parameters_schema", None) or {})
    schema.setdefault("type", "object")
    method = str(getattr(getattr(tool, "endpoint", None), "method", "")).lower()
    annotations = None
    if method:
        annotations = types.ToolAnnotations(
            read_only_hint=method in ("get", "head"), destructive_hint=method == "delete"
        )
    return types.Tool(
        name=tool.name, description=tool.description or None, input_schema=schema, annotations=annotations
    )


async def listed_tools(app_name: str) -> list[types.Tool]:
    """The tools ``tools/list`` answers for the app (the Agent Registry's record of the server lists them too): the
    memory's, then the registry's but those named like the memory's."""
    registry = [_describe(tool) for tool in await direct.offered_tools(app_name)]
    return [*mcp_memory.TOOLS.values(), *(tool for tool in registry if tool.name not in mcp_memory.TOOLS)]


async def _list_tools(ctx: ServerRequestContext[Any, Request], params: Any) -> types.ListToolsResult:
    assert ctx.request is not None  # over HTTP every request has one
    app_name, _ = ctx.request.scope[SCOPE_KEY]
    return types.ListToolsResult(tools=await listed_tools(app_name))


async def _call_tool(
    ctx: ServerRequestContext[Any, Request], params: types.CallToolRequestParams
) -> types.CallToolResult:
    if params.name in mcp_memory.TOOLS:
        caller = _caller(ctx)
        return await mcp_memory.call(
            params.name,
            params.arguments if params.arguments is not None else {},
            app_name=caller.app_name,
            user_id=caller.user_id,
            cause=f"mcp:{caller.client}"[:256],
        )
    try:
        outcome = await direct.call_tool(name=params.name, arguments=params.arguments or {}, caller=_caller(ctx))
    except direct.UnknownTool as unknown:
        raise MCPError(types.INVALID_PARAMS, str(unknown)) from unknown
    except InvalidArguments as invalid:
        raise MCPError(types.INVALID_PARAMS, f"Arguments of {params.name}: {invalid}") from invalid
    text = json.dumps(outcome.result, ensure_ascii=False, default=str)
    if outcome.status == "succeeded":
        structured = outcome.result if isinstance(outcome.result, dict) else None
        return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=structured)
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


def _read_call(body: bytes) -> tuple[bool, bool, str | int | None]:
    """Whether the JSON-RPC body calls a tool, whether that writes, and its request's id; what is not JSON the SDK
    answers. Every call writes but the memory tools that only read (a read-only key may search its user's memory).

    A refusal carries the id: Go's MCP client reads an error without one as no JSON-RPC error at all, and showed
    a bare "Bad Request" to a key of the whole app without X-User-Id (issue 43).
    """
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return False, False, None
    messages = message if isinstance(message, list) else [message]
    calls = [m for m in messages if isinstance(m, dict) and m.get("method") == "tools/call"]
    writes = any(_called(m) not in mcp_memory.READ_ONLY for m in calls)
    return bool(calls), writes, call_id_of(message)


def _called(message: dict[str, Any]) -> Any:
    """The name of the tool a ``tools/call`` message calls (None if it names none the way the protocol says)."""
    params = message.get("params")
    return params.get("name") if isinstance(params, dict) and isinstance(params.get("name"), str) else None


class McpApplication:
    """The ASGI application under ``/mcp/``: authenticates, then hands the call to the SDK's manager."""

    def __init__(self) -> None:
        # No registry schema declares Mcp-Param-* headers, so nothing to validate them against: without this
        # lookup the SDK would run the whole tools/list handler before every 2026-07-28 tools/call.
        self.server: Server[Any] = Server(
            "cognizes-tools",
            on_list_tools=_list_tools,
            on_call_tool=_call_tool,
            get_tool_input_schema=lambda name: None,
        )
        self._managers: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[StreamableHTTPSessionManager, asyncio.Event]
        ] = weakref.WeakKeyDictionary()
        self._holders: set[asyncio.Task[None]] = set()

    async def __call__(
        self, scope: dict[str, Any], receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]
    ) -> None:
        request = Request(scope, receive)
        app_name, _, rest = scope["path"][len(PREFIX) :].partition("/")
        call_id: str | int | None = None
        try:
            if not app_name or rest:
                raise Refused(404, f"No MCP endpoint at {scope['path']}; each app's registry is at {PREFIX}<app>/.")
            if request.method != "POST":
                raise Refused(405, "MCP's endpoint takes POST (this server is stateless: no stream, no session).")
            body = await request.body()  # read within its limits already (cognizes.access.body_limit)
            is_call, writes, call_id = _read_call(body)
            caller = await run_in_db_thread(
                authenticate_caller,
                request.headers,
                app_name,
                write=writes,
                needs_user=is_call,
                what="tool registry",
            )
        except Refused as refused:
            response: Response = refusal(refused.status, str(refused), call_id)
            if refused.status == 405:
                response.headers["Allow"] = "POST"
            if refused.status == 401:
                response.headers["WWW-Authenticate"] = 'Bearer realm="cognizes"'
            return await response(scope, receive, send)
        except Exception as error:
            if (outage := outage_refusal(error)) is None:
                raise
            return await outage(scope, receive, send)
        manager = await self._manager()
        inner = {**scope, SCOPE_KEY: (app_name, caller.user_id)}
        await manager.handle_request(inner, replay(body, receive), send)
        return None

    async def _manager(self) -> StreamableHTTPSessionManager:
        """This event loop's running manager, started on first use.

        The manager serves only inside ``run()``, a task group on one loop, and
        uvicorn runs with ``--lifespan off`` (``cognizes.run``): a task of this
        loop holds it open until the loop ends.
        """
        loop = asyncio.get_running_loop()
        entry = self._managers.get(loop)
        if entry is None:
            manager = StreamableHTTPSessionManager(app=self.server, stateless=True, json_response=True)
            entry = self._managers[loop] = (manager, asyncio.Event())
            task = loop.create_task(_hold(manager, entry[1]), name="cognizes-mcp-manager")
            self._holders.add(task)
            task.add_done_callback(self._holders.discard)
        await entry[1].wait()
        return entry[0]


async def _hold(manager: StreamableHTTPSessionManager, started: asyncio.Event) -> None:
    async with manager.run():
        started.set()
        await asyncio.Event().wait()

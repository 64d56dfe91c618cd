"""ADK classes over the tool registry: ``DatabaseToolset`` (tools from rows) and ``AuditPlugin``.

    agent = LlmAgent(..., tools=[DatabaseToolset()])
    runner = Runner(..., plugins=[AuditPlugin()])

The toolset checks one counter row (``ToolRegistryMarker``) on every model
turn and rebuilds its tools only when it moved, so an edit in the admin or the
API reaches running agents without a restart and without a reload per call.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, cast

import httpx
from django.conf import settings
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.events.event import Event
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset, ToolPredicate
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.openapi_tool.openapi_spec_parser.rest_api_tool import RestApiTool
from google.adk.tools.tool_confirmation import ToolConfirmation
from google.adk.tools.tool_context import ToolContext
from google.adk.utils._function_call_names import REQUEST_CONFIRMATION_FUNCTION_CALL_NAME
from google.genai import types
from typing_extensions import override

from cognizes.infra.db_threads import run_in_db_thread
from tools_app import mcp_servers, services
from tools_app.mcp_toolsets import RegistryMcpToolset
from tools_app.models import ApprovalStatus, ExecutionStatus, Tool, ToolKind
from tools_app.openapi import build_rest_api_tool

logger = logging.getLogger(__name__)


# ---- tools built from rows ---------------------------------------------------------------------


def _approval_gate(tool_name: str, tool_context: ToolContext | None) -> dict[str, str] | None:
    """Pause a call until a person decides (ADK's confirmation flow); None once approved."""
    if tool_context is None:
        return {"error": f"{tool_name} needs approval and cannot run without a tool context."}
    if not tool_context.tool_confirmation:
        tool_context.request_confirmation(hint=f"Approve or reject the call of {tool_name}.")
        tool_context.actions.skip_summarization = True
        return {"error": "This tool call waits for a person to approve or reject it."}
    if not tool_context.tool_confirmation.confirmed:
        return {"error": "This tool call is rejected."}
    return None


class RegistryTool:
    """What a tool built from a registry row knows of its row, beside what ADK gives the model."""

    registry_version: int = 0
    requires_approval: bool = False
    parameters_schema: dict[str, Any] = {}
    """The row's JSON schema of the arguments (``Tool.parameters_schema``): what callers outside a run are checked
    against."""
    timeout_seconds: float = 30.0


class RegistryRestApiTool(RegistryTool, RestApiTool):
    """A ``RestApiTool`` from a registry row: knows its version and whether it needs approval."""

    @override
    async def check_require_confirmation(self, args: dict[str, Any], tool_context: ToolContext) -> bool:
        return self.requires_approval

    @override
    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext | None) -> dict[str, Any]:
        if self.requires_approval and (paused := _approval_gate(self.name, tool_context)) is not None:
            return paused
        return await super().run_async(args=args, tool_context=tool_context)


class RegistryFunctionTool(RegistryTool, FunctionTool):
    """A ``FunctionTool`` under the row's name and description, not the function's."""

    @override
    def _get_declaration(self) -> types.FunctionDeclaration | None:
        declaration = super()._get_declaration()
        if declaration is not None:
            declaration.name, declaration.description = self.name, self.description
        return declaration


def _secret_headers(row: Tool) -> Callable[[ReadonlyContext], dict[str, str]] | None:
    """Headers carrying the row's secret, as resolved when the registry was loaded (``load_secret_headers``)."""
    headers = dict(row.secret_headers or {})
    if not headers:
        return None
    return lambda _: dict(headers)


def build_tool(row: Tool) -> BaseTool:
    """The ADK tool for one registry row."""
    tool: RegistryRestApiTool | RegistryFunctionTool
    if row.kind == ToolKind.OPENAPI:
        timeout = row.timeout_seconds
        assert row.openapi_operation is not None  # an OpenAPI row has its operation (check_tool)
        built = build_rest_api_tool(
            row.openapi_operation,
            tool_class=RegistryRestApiTool,
            header_provider=_secret_headers(row),
            httpx_client_factory=lambda: httpx.AsyncClient(timeout=timeout),
            allow_private_network_access=settings.COGNIZES_TOOLS_ALLOW_PRIVATE_NETWORK,
        )
        tool = cast(RegistryRestApiTool, built)  # of tool_class, which its annotation does not carry through
        if row.base_url:
            tool.endpoint.base_url = row.base_url
    else:
        function = services.resolve_callable(row.callable_path)
        tool = RegistryFunctionTool(function, require_confirmation=row.requires_approval)
    tool.name = row.name
    tool.description = row.description or tool.description
    tool.registry_version = row.version
    tool.requires_approval = row.requires_approval
    tool.parameters_schema = row.parameters_schema or {}
    tool.timeout_seconds = row.timeout_seconds
    return tool


listing_app: ContextVar[str | None] = ContextVar("cognizes_listing_app", default=None)
"""The app whose registry a ``DatabaseToolset`` without ``app_name`` lists outside an agent run
(set while A2A describes the app's tools in its agent card)."""


class DatabaseToolset(BaseToolset):
    """The enabled tools of an app's registry, and of its external MCP servers, cached until the registry changes."""

    def __init__(
        self,
        *,
        app_name: str | None = None,
        tool_filter: ToolPredicate | list[str] | None = None,
        tool_name_prefix: str | None = None,
        mcp_servers: bool = True,
    ):
        """``app_name`` defaults to the running app's name (the Runner's ``app_name``).

        ``mcp_servers=False`` leaves the app's external MCP servers out: the registry's own tools only (what
        Cognizes serves as the app's MCP server, which must not relay other servers, nor loop back to itself).
        """
        super().__init__(tool_filter=tool_filter, tool_name_prefix=tool_name_prefix)
        self._app_name = app_name
        self._mcp_servers = mcp_servers
        # Check the registry on every model turn, not once per invocation: an
        # edit must reach an agent that is in the middle of a long run.
        self._use_invocation_cache = False
        self._cache: dict[str, tuple[int, list[BaseTool], list[RegistryMcpToolset]]] = {}
        self._warned: set[str] = set()
        self._clashes: set[tuple[str, str]] = set()

    @override
    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
        app_name = self._app_name or (readonly_context.session.app_name if readonly_context else listing_app.get())
        if not app_name:
            raise ValueError("DatabaseToolset needs an app_name outside of an agent run.")
        tools, toolsets = await self._current_tools(app_name)
        if toolsets:
            tools = self._without_clashes(
                app_name,
                tools,
                await asyncio.gather(*(toolset.get_tools_with_prefix(readonly_context) for toolset in toolsets)),
            )
        return [tool for tool in tools if self._is_tool_selected(tool, readonly_context)]

    @override
    async def close(self) -> None:
        """Close the MCP sessions of the external servers' toolsets."""
        for _, _, toolsets in self._cache.values():
            for toolset in toolsets:
                await toolset.close()
        self._cache.clear()

    def _without_clashes(self, app_name: str, tools: list[BaseTool], listed: list[list[BaseTool]]) -> list[BaseTool]:
        """The registry's tools, then each server's, leaving out a name already taken (said once): the model
        must see one tool per name, and the registry's own rows win."""
        names = {tool.name for tool in tools}
        tools = list(tools)
        for server_tools in listed:
            for tool in server_tools:
                if tool.name not in names:
                    names.add(tool.name)
                    tools.append(tool)
                elif (app_name, tool.name) not in self._clashes:
                    self._clashes.add((app_name, tool.name))
                    logger.warning(
                        "MCP server %s of app %r offers %s, a name another tool of the app already has; left out "
                        "(set the server's tool_name_prefix)",
                        getattr(tool, "mcp_server", "?"),
                        app_name,
                        tool.name,
                    )
        return tools

    async def _current_tools(self, app_name: str) -> tuple[list[BaseTool], list[RegistryMcpToolset]]:
        version = await run_in_db_thread(services.get_registry_version, app_name=app_name)
        cached = self._cache.get(app_name)
        if cached is not None and cached[0] == version:
            return cached[1], cached[2]
        version, rows, servers = await run_in_db_thread(mcp_servers.get_enabled_registry, app_name=app_name)
        tools = []
        for row in rows:
            try:
                tools.append(build_tool(row))
            except Exception:
                # One broken row (say, a callable taken off the allow-list) must not take the others down.
                logger.exception("tool %s of app %s cannot be built; left out", row.name, app_name)
        toolsets = [RegistryMcpToolset(server) for server in servers] if self._mcp_servers else []
        if cached is not None:
            for old in cached[2]:
                old.retire()  # its sessions close once the calls still running on them end
        self._cache[app_name] = (version, tools, toolsets)
        # A server not yet asked for its tools counts as something offered: only a registry without any is said.
        offered = {tool.name for tool in tools} | {
            f"mcp server {server.name}" for server in servers if self._mcp_servers
        }
        offered |= {
            f"{server.tool_name_prefix}_{tool['name']}" if server.tool_name_prefix else tool["name"]
            for server in servers
            for tool in mcp_servers.describe(server)["tools"]
        }
        self._warn_once_if_missing(app_name, offered)
        return tools, toolsets

    def _warn_once_if_missing(self, app_name: str, present: set[str]) -> None:
        """Say once per app when the registry lacks tools asked for, or has none: registry tools belong to one app.

        An agent moved to another app name silently lost its registry tools, and a
        model then apologised for a tool it could not call.
        """
        wanted = set(self.tool_filter) if isinstance(self.tool_filter, list) else set()
        missing = sorted(wanted - present)
        if app_name in self._warned or not (missing or not present):
            return
        self._warned.add(app_name)
        what = f"lacks {', '.join(missing)}" if missing else "has no enabled tools"
        logger.warning(
            "The tool registry of app %r %s: registry tools belong to one app. Add them for %r "
            "(admin, or POST /api/v1/apps/%s/tools/), or run the agent under the app that has them.",
            app_name,
            what,
            app_name,
            app_name,
        )


# ---- approvals ---------------------------------------------------------------------------------


async def approval_message(*, app_name: str, user_id: str, session_id: str) -> types.Content | None:
    """The decisions people made on the session's paused calls, as the message that resumes the agent.

    Pass it as ``new_message`` to ``Runner.run_async``; None while nothing was decided.
    """
    approvals = await run_in_db_thread(
        services.do_take_decided_approvals, app_name=app_name, user_id=user_id, session_id=session_id
    )
    if not approvals:
        return None
    parts = [
        types.Part(
            function_response=types.FunctionResponse(
                name=REQUEST_CONFIRMATION_FUNCTION_CALL_NAME,
                id=approval.request_id,
                response={"confirmed": approval.status == ApprovalStatus.APPROVED},
            )
        )
        for approval in approvals
    ]
    return types.Content(role="user", parts=parts)


# ---- the audit ---------------------------------------------------------------------------------


def execution_status(*, paused: bool, confirmation: ToolConfirmation | None, result: Any) -> tuple[str, str]:
    """How a finished call is audited (an ``ExecutionStatus``) and its error, from what the tool answered."""
    if paused:
        return ExecutionStatus.PENDING_APPROVAL, ""
    if confirmation is not None and not confirmation.confirmed:
        return ExecutionStatus.REJECTED, ""
    if isinstance(result, dict) and result.get("error"):
        return ExecutionStatus.FAILED, str(result["error"])
    return ExecutionStatus.SUCCEEDED, ""


class AuditPlugin(BasePlugin):
    """Record every tool call, paused approval and sandboxed code run of a Runner.

    The rows are written on the database threads after the call, in the
    background: the agent waits for no database round trip, and a failed
    write is logged, never raised into the agent.
    """

    def __init__(self, name: str = "cognizes_audit", *, client: str = ""):
        """``client``: the program calling outside an agent run (``tools_app.direct``), stored on each row."""
        super().__init__(name)
        self.client = client
        self._started: dict[tuple[str, str], tuple[float, float]] = {}
        self._code_started: dict[str, tuple[types.ExecutableCode, float, float]] = {}
        self._writes: set[asyncio.Task[None]] = set()

    async def flush(self) -> None:
        """Wait until every audit row of calls made so far is written."""
        while self._writes:
            await asyncio.gather(*list(self._writes), return_exceptions=True)

    @override
    async def close(self) -> None:
        await self.flush()

    def _write(self, service: Callable[..., Any], **fields: Any) -> None:
        async def write() -> None:
            try:
                await run_in_db_thread(service, **fields)
            except Exception:
                logger.exception("audit write failed: %s", service.__name__)

        task = asyncio.get_running_loop().create_task(write())
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    @staticmethod
    def _key(tool_context: ToolContext) -> tuple[str, str]:
        return tool_context.invocation_id, tool_context.function_call_id or ""

    @override
    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict | None:
        self._started[self._key(tool_context)] = (time.time(), time.perf_counter())
        return None

    @override
    async def after_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext, result: dict
    ) -> dict | None:
        status, error = execution_status(
            paused=tool_context.function_call_id in tool_context.actions.requested_tool_confirmations,
            confirmation=tool_context.tool_confirmation,
            result=result,
        )
        self._record(tool, tool_args, tool_context, status=status, result=result, error=error)
        return None

    @override
    async def on_tool_error_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext, error: Exception
    ) -> dict | None:
        message = "cancelled" if isinstance(error, asyncio.CancelledError) else f"{type(error).__name__}: {error}"
        self._record(tool, tool_args, tool_context, status=ExecutionStatus.FAILED, result=None, error=message)
        return None

    def _record(
        self,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        *,
        status: str,
        result: Any,
        error: str,
    ) -> None:
        now = time.perf_counter()
        started_at, started = self._started.pop(self._key(tool_context), (time.time(), now))
        session = tool_context.session
        self._write(
            services.do_record_execution,
            app_name=session.app_name,
            user_id=session.user_id,
            session_id=session.id,
            invocation_id=tool_context.invocation_id,
            function_call_id=tool_context.function_call_id or "",
            tool_name=tool.name,
            tool_version=getattr(tool, "registry_version", None),
            arguments=dict(tool_args),
            result=result,
            error=error,
            status=status,
            started_at=_aware(started_at),
            duration_ms=(now - started) * 1000,
            client=self.client,
            mcp_server=getattr(tool, "mcp_server", ""),
        )

    @override
    async def on_event_callback(self, *, invocation_context: Any, event: Event) -> Event | None:
        session = invocation_context.session
        scope = {"app_name": session.app_name, "user_id": session.user_id, "session_id": session.id}
        for part in (event.content.parts if event.content else None) or []:
            call = part.function_call
            if call is not None and call.name == REQUEST_CONFIRMATION_FUNCTION_CALL_NAME:
                original = (call.args or {}).get("originalFunctionCall") or {}
                self._write(
                    services.do_record_approval_request,
                    **scope,
                    invocation_id=event.invocation_id,
                    request_id=call.id,
                    function_call_id=original.get("id", ""),
                    tool_name=original.get("name", ""),
                    arguments=original.get("args") or {},
                )
            if part.executable_code is not None:
                self._code_started[event.invocation_id] = (part.executable_code, time.time(), time.perf_counter())
            if part.code_execution_result is not None:
                self._record_sandbox(scope, event.invocation_id, part.code_execution_result)
        return None

    def _record_sandbox(self, scope: dict[str, str], invocation_id: str, outcome: types.CodeExecutionResult) -> None:
        code, started_at, started = self._code_started.pop(
            invocation_id,
            (types.ExecutableCode(code="", language=types.Language.LANGUAGE_UNSPECIFIED), time.time(), 0.0),
        )
        # ADK folds stdout/stderr into one text behind a heading; keep just the output.
        output = re.sub(r"^Code execution (result|error):\n", "", outcome.output or "").rstrip("\n")
        failed = outcome.outcome != types.Outcome.OUTCOME_OK
        self._write(
            services.do_record_sandbox_execution,
            **scope,
            invocation_id=invocation_id,
            code=code.code or "",
            language=str(getattr(code.language, "value", code.language) or ""),
            stdout="" if failed else output,
            stderr=output if failed else "",
            exit_status=str(getattr(outcome.outcome, "value", outcome.outcome)),
            started_at=_aware(started_at),
            duration_ms=(time.perf_counter() - started) * 1000 if started else 0.0,
        )


def _aware(epoch_seconds: float) -> datetime:
    return datetime.fromtimestamp(epoch_seconds, tz=UTC)

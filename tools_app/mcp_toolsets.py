"""ADK's ``McpToolset`` for an external MCP server row, made safe to offer beside the registry's own tools.

``DatabaseToolset`` builds one ``RegistryMcpToolset`` per enabled ``McpServer``
row. On top of ADK's toolset it:

* filters the server's tools by the row's allow and deny lists;
* bounds every listing and every call by the row's timeout, and answers a
  server that is down, slow or refused as the tool's ``{"error": …}`` (the
  model reads it, the audit marks the call failed): one bad server never
  hangs a turn or takes the other tools down;
* keeps the tools the server listed last (on the row, ``discovered_tools``),
  so while it is down agents still see them and a call says why it failed,
  and waits a little before asking a failing server again;
* sends the row's headers, with its secret as resolved when the registry
  was loaded (``tools_app.secret_headers``), and checks the URL against
  ``COGNIZES_TOOLS_ALLOW_PRIVATE_NETWORK`` as OpenAPI tools do, connecting to the
  address it checked (``tools_app.outbound``: no DNS rebinding);
* closes its MCP sessions once the row changed and no call still runs.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from django.conf import settings
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.mcp_tool import McpTool, McpToolset, SseConnectionParams, StreamableHTTPConnectionParams
from google.adk.tools.openapi_tool.openapi_spec_parser.rest_api_tool import _validate_url
from google.adk.tools.tool_context import ToolContext
from mcp_types import Tool as McpToolDescription
from typing_extensions import override

from cognizes.infra.db_threads import run_in_db_thread
from tools_app import mcp_servers
from tools_app.models import McpServer, McpTransport
from tools_app.outbound import pinned_client

logger = logging.getLogger(__name__)

RETRY_AFTER_FAILURE_SECONDS = 15.0
"""How long a server that failed to list is not asked again (agents get the tools it listed last meanwhile)."""
SSE_READ_TIMEOUT_SECONDS = 300.0
"""The SSE transport's idle stream between calls; each call is bounded by the row's timeout instead."""
_closing: set[asyncio.Task[None]] = set()


def _summary(tool: McpToolDescription) -> dict[str, Any]:
    """A listed tool as the row keeps it (``discovered_tools``)."""
    return {"name": tool.name, "description": tool.description or "", "input_schema": tool.input_schema or {}}


def _description(summary: dict[str, Any]) -> McpToolDescription | None:
    try:
        return McpToolDescription.model_validate(
            {
                "name": summary["name"],
                "description": summary.get("description") or None,
                "inputSchema": summary.get("input_schema") or {"type": "object"},
            }
        )
    except (KeyError, TypeError, ValueError):
        return None


async def _check_network(url: str) -> None:
    """Refuse loopback, private and link-local hosts unless ``COGNIZES_TOOLS_ALLOW_PRIVATE_NETWORK`` (ADK's rule
    for OpenAPI tools, applied before each connection)."""
    if not settings.COGNIZES_TOOLS_ALLOW_PRIVATE_NETWORK:
        await _validate_url(url)


class RegistryMcpTool(McpTool):
    """One tool of an external MCP server: a call is bounded, and a failure is the tool's error, never raised."""

    def __init__(self, *, toolset: RegistryMcpToolset, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._toolset = toolset
        self.mcp_server = toolset.server_name
        """The row's name, on the audit row (``ToolExecution.mcp_server``)."""
        self.registry_version = toolset.server_version
        """The server row's version, on the audit row (``tool_version``)."""
        self.timeout_seconds = toolset.timeout_seconds

    @override
    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        where = f"MCP server {self.mcp_server!r}"
        self._toolset.calls_started()
        try:
            await _check_network(self._toolset.url)
            async with asyncio.timeout(self.timeout_seconds):
                result = await super().run_async(args=args, tool_context=tool_context)
        except TimeoutError:
            return {"error": f"The {where} did not answer {self.name} within {self.timeout_seconds:g} s (timed out)."}
        except Exception as error:  # ADK raises some failures (a session that cannot open) instead of answering
            return {"error": f"The {where} failed to run {self.name}: {error}"}
        finally:
            self._toolset.call_ended()
        return self._audited(result, tool_context, where)

    def _audited(self, result: Any, tool_context: ToolContext, where: str) -> Any:
        """The result, with an ``error`` the audit and the model read when the server reported a failure."""
        if not isinstance(result, dict):
            return result
        paused = tool_context.function_call_id in tool_context.actions.requested_tool_confirmations
        if result.get("error") and not paused and tool_context.tool_confirmation is None:
            return {**result, "error": f"The {where} failed to run {self.name}: {result['error']}"}
        if result.get("isError") and not result.get("error"):
            texts = [part.get("text", "") for part in result.get("content") or [] if isinstance(part, dict)]
            return {**result, "error": " ".join(text for text in texts if text) or f"The {where} reported an error."}
        return result


class RegistryMcpToolset(McpToolset):
    """The tools of one ``McpServer`` row, as ``DatabaseToolset`` offers them."""

    def __init__(self, row: McpServer) -> None:
        headers = {**row.headers, **(row.secret_headers or {})}
        params: StreamableHTTPConnectionParams | SseConnectionParams
        if row.transport == McpTransport.SSE:
            params = SseConnectionParams(
                url=row.url,
                headers=headers,
                timeout=row.timeout_seconds,
                sse_read_timeout=max(SSE_READ_TIMEOUT_SECONDS, row.timeout_seconds),
                httpx_client_factory=pinned_client,  # type: ignore[arg-type]  # httpx2's, which mcp uses; ADK names httpx
            )
        else:
            params = StreamableHTTPConnectionParams(
                url=row.url,
                headers=headers,
                timeout=row.timeout_seconds,
                sse_read_timeout=row.timeout_seconds,
                httpx_client_factory=pinned_client,  # type: ignore[arg-type]  # httpx2's, which mcp uses; ADK names httpx
            )
        super().__init__(
            connection_params=params,
            tool_name_prefix=row.tool_name_prefix or None,
            tool_list_cache_ttl_seconds=row.list_cache_seconds or None,
            require_confirmation=row.requires_approval,
        )
        self.server_id, self.server_name, self.server_version = row.pk, row.name, row.version
        self.url, self.timeout_seconds, self.app_name = row.url, row.timeout_seconds, row.app_name
        self._offers = row.offers
        self._stored = list(row.discovered_tools or [])
        self._known = self._tools([d for s in self._stored if (d := _description(s)) is not None])
        self._retry_at = 0.0
        self._calls = 0
        self._retired = False

    def _tools(self, listed: list[McpToolDescription]) -> list[BaseTool]:
        tools: list[BaseTool] = []
        for description in listed:
            if not self._offers(description.name):
                continue
            try:
                tools.append(
                    RegistryMcpTool(
                        toolset=self,
                        mcp_tool=description,
                        mcp_session_manager=self._mcp_session_manager,
                        require_confirmation=self._require_confirmation,
                    )
                )
            except ValueError:  # a name ADK keeps for itself (transfer_to_agent, …)
                logger.warning(
                    "MCP server %s offers a tool named %s, which ADK reserves; left out",
                    self.server_name,
                    description.name,
                )
        return sorted(tools, key=lambda tool: tool.name)

    @override
    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
        """The server's allowed tools; those it listed last when it cannot list now (said once per failure)."""
        if time.monotonic() < self._retry_at:
            return self._known
        try:
            await _check_network(self.url)
            async with asyncio.timeout(self.timeout_seconds * 2):  # ADK retries a failed listing once
                listed = [tool.raw_mcp_tool for tool in await super().get_tools(readonly_context)]
        except Exception as error:  # TimeoutError included: the turn goes on with what is known
            self._retry_at = time.monotonic() + RETRY_AFTER_FAILURE_SECONDS
            logger.warning(
                "MCP server %s of app %s (%s) cannot list its tools: %s; agents keep the %d it listed last, "
                "and it is asked again in %g s",
                self.server_name,
                self.app_name,
                self.url,
                f"timed out after {self.timeout_seconds:g} s" if isinstance(error, TimeoutError) else error,
                len(self._known),
                RETRY_AFTER_FAILURE_SECONDS,
            )
            return self._known
        self._known = self._tools(listed)
        await self._remember(listed)
        return self._known

    async def _remember(self, listed: list[McpToolDescription]) -> None:
        summaries = [_summary(tool) for tool in listed]
        if summaries == self._stored or self.server_id is None:
            return
        self._stored = summaries
        try:
            await run_in_db_thread(
                mcp_servers.do_record_discovered_tools,
                server_id=self.server_id,
                version=self.server_version,
                tools=summaries,
            )
        except Exception:
            logger.exception("the tools MCP server %s listed could not be kept on its row", self.server_name)

    # ---- closing once the row changed ----------------------------------------------------------

    def calls_started(self) -> None:
        self._calls += 1

    def call_ended(self) -> None:
        self._calls -= 1
        if self._retired and not self._calls:
            self._close_soon()

    def retire(self) -> None:
        """The row changed: close the MCP sessions, once the calls still running on them end."""
        self._retired = True
        if not self._calls:
            self._close_soon()

    def _close_soon(self) -> None:
        task = asyncio.get_running_loop().create_task(self.close())
        _closing.add(task)
        task.add_done_callback(_closing.discard)

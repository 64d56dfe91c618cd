"""A registry tool called by a program instead of a model (the MCP server), on the path agents' calls take.

    outcome = await call_tool(name="get_weather", arguments={"city": "Paris"},
                              caller=Caller(app_name="travel", user_id="ada", client="my-client/1.0 (MCP 2025-11-25)"))

The tools are the ones ``DatabaseToolset`` gives agents (cached until the
app's registry marker moves), and the call is ADK's own function-call step
(``handle_function_calls_async``) under ``AuditPlugin``: the row's secret
headers, its timeout, the approval gate and the audit row are theirs, not
copied here. What is added is only what a caller without a run needs:

* the arguments are checked against the tool's schema before anything runs;
* a call needing approval pauses as in a run (a ``ToolApproval`` and a
  ``pending_approval`` audit row); the same call repeated runs once a person
  approved it (or answers rejected), and while nobody has decided it answers
  so again without asking twice (``services.do_take_approval_of_call``).
"""

from __future__ import annotations

import asyncio
import functools
import uuid
from dataclasses import dataclass
from typing import Any

from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.llm_agent import LlmAgent
from google.adk.events.event import Event
from google.adk.flows.llm_flows.functions import generate_request_confirmation_event, handle_function_calls_async
from google.adk.plugins.plugin_manager import PluginManager
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.session import Session
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_confirmation import ToolConfirmation
from google.genai import types

from cognizes.infra.db_threads import run_in_db_thread
from tools_app import services
from tools_app.adk import AuditPlugin, DatabaseToolset, RegistryTool, execution_status, listing_app
from tools_app.models import ApprovalStatus, ExecutionStatus

_TOOLSET = DatabaseToolset(mcp_servers=False)
"""One per process, as one per agent: its cache is rebuilt when an app's registry marker moves. The registry's
own tools only: an app's external MCP servers are theirs to serve (and one pointing back here would loop)."""
_AGENT = LlmAgent(name="direct_caller", model="none", description="A program calling registry tools directly.")
"""ADK's tool step runs the agent's tool callbacks; this agent has none and never calls a model."""
_SESSIONS = InMemorySessionService()  # the invocation needs one; the tool step writes nothing to it


class UnknownTool(LookupError):
    """The app's registry offers no enabled tool of that name."""


@dataclass(frozen=True)
class Caller:
    app_name: str
    user_id: str
    client: str = ""
    """Who called (an MCP client's name and version, its protocol version): the audit row's ``client``."""
    session_id: str = "mcp"
    """Stands for the session of a run in the audit and approval rows (there is none)."""
    call_id: str = ""
    """The caller's id of the request (a JSON-RPC id): the audit row's ``invocation_id``."""


@dataclass(frozen=True)
class Outcome:
    status: str
    """An ``ExecutionStatus``: succeeded, failed, pending_approval or rejected."""
    result: Any
    """What the tool answered (an ``{"error": …}`` when it failed, waits or was rejected)."""
    approval_id: int | None = None


def forget_tools() -> None:
    """Drop the built tools (tests: a flushed database numbers the registry markers from 0 again)."""
    global _TOOLSET
    _TOOLSET = DatabaseToolset(mcp_servers=False)


async def offered_tools(app_name: str) -> list[BaseTool]:
    """The app's enabled registry tools, as agents get them (a broken row is left out)."""
    token = listing_app.set(app_name)
    try:
        return await _TOOLSET.get_tools()
    finally:
        listing_app.reset(token)


async def call_tool(*, name: str, arguments: Any, caller: Caller) -> Outcome:
    """Run the app's tool ``name`` for ``caller``; ``UnknownTool`` or ``services.InvalidArguments`` if it cannot.

    Every call that reaches the tool (or its approval gate) leaves one audit row.
    """
    tool = next((tool for tool in await offered_tools(caller.app_name) if tool.name == name), None)
    if tool is None:
        raise UnknownTool(f"The registry of {caller.app_name!r} has no enabled tool {name!r}.")
    schema = tool.parameters_schema if isinstance(tool, RegistryTool) else {}
    services.check_arguments(schema, arguments)
    call_id, confirmation = f"direct-{uuid.uuid4().hex}", None
    if getattr(tool, "requires_approval", False):
        approval = await run_in_db_thread(
            services.do_take_approval_of_call,
            app_name=caller.app_name,
            user_id=caller.user_id,
            session_id=caller.session_id,
            tool_name=name,
            arguments=arguments,
        )
        if approval is not None and approval.status == ApprovalStatus.PENDING:
            return Outcome(ExecutionStatus.PENDING_APPROVAL, _waiting(approval.id), approval.id)
        if approval is not None:
            call_id = approval.function_call_id or call_id  # the audit pairs the paused call with its run
            confirmation = ToolConfirmation(confirmed=approval.status == ApprovalStatus.APPROVED)
    return await _run(tool, arguments, caller, call_id, confirmation)


async def _run(
    tool: BaseTool,
    arguments: dict[str, Any],
    caller: Caller,
    call_id: str,
    confirmation: ToolConfirmation | None,
) -> Outcome:
    plugins = _plugins(caller.client, asyncio.get_running_loop())
    audit: AuditPlugin = plugins.plugins[0]  # type: ignore[assignment]  # _plugins puts it first
    context = InvocationContext(
        session_service=_SESSIONS,
        invocation_id=caller.call_id or call_id,
        agent=_AGENT,
        session=Session(id=caller.session_id, app_name=caller.app_name, user_id=caller.user_id),
        plugin_manager=plugins,
    )
    call = Event(
        invocation_id=context.invocation_id,
        author=_AGENT.name,
        content=types.Content(
            role="model",
            parts=[types.Part(function_call=types.FunctionCall(id=call_id, name=tool.name, args=arguments))],
        ),
    )
    try:
        # The row's timeout bounds each HTTP request of an OpenAPI tool; this bounds the whole call (a slow
        # Python callable too). ADK reports a cancelled call to AuditPlugin like a failed one.
        async with asyncio.timeout(getattr(tool, "timeout_seconds", 30.0) + 1.0):
            answer = await handle_function_calls_async(
                context,
                call,
                {tool.name: tool},
                tool_confirmation_dict={call_id: confirmation} if confirmation is not None else None,
            )
    except TimeoutError:
        await audit.flush()
        return Outcome(ExecutionStatus.FAILED, {"error": f"{tool.name} did not answer in time."})
    except Exception as error:  # already audited (on_tool_error_callback); the caller gets it as the tool's error
        await audit.flush()
        return Outcome(ExecutionStatus.FAILED, {"error": f"{type(error).__name__}: {error}"})
    result = _response(answer)
    paused = answer is not None and call_id in answer.actions.requested_tool_confirmations
    if paused and answer is not None:  # paused implies an answer: said again for the type checker
        request = generate_request_confirmation_event(context, call, answer)
        assert request is not None  # paused: a confirmation was requested
        await audit.on_event_callback(invocation_context=context, event=request)  # the ToolApproval row
    await audit.flush()
    status, _ = execution_status(paused=paused, confirmation=confirmation, result=result)
    if paused:
        approval = await run_in_db_thread(
            services.do_take_approval_of_call,
            app_name=caller.app_name,
            user_id=caller.user_id,
            session_id=caller.session_id,
            tool_name=tool.name,
            arguments=arguments,
        )
        approval_id = approval.id if approval is not None else None
        return Outcome(status, _waiting(approval_id), approval_id)
    return Outcome(status, result)


@functools.lru_cache(maxsize=64)
def _plugins(client: str, loop: asyncio.AbstractEventLoop) -> PluginManager:
    """An ``AuditPlugin`` writing ``client`` on its rows, made once per client and event loop (its writes are
    tasks of one loop), not per call: ADK logs each plugin it registers."""
    return PluginManager(plugins=[AuditPlugin(client=client)])


def _response(answer: Event | None) -> Any:
    for part in (answer.content.parts if answer is not None and answer.content else None) or []:
        if part.function_response is not None:
            return part.function_response.response
    return None


def _waiting(approval_id: int | None) -> dict[str, str]:
    return {
        "error": f"This call waits for a person to approve it (approval {approval_id}); "
        "call it again with the same arguments once it is decided."
    }

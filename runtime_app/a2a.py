"""A2A: every agent of ``COGNIZES_AGENTS`` is an Agent2Agent server, beside the HTTP API.

    GET  /a2a/{app}/.well-known/agent-card.json   the agent card (public, as A2A discovery is)
    POST /a2a/{app}/                               JSON-RPC: message/send, message/stream,
                                                   tasks/get, tasks/cancel (and A2A 1.0's names)

The protocol is a2a-sdk's (JSON-RPC dispatch, tasks, streaming) and the agent
side ADK's own ``A2aAgentExecutor``, run on the app's Cognizes runner: an A2A
context is a Cognizes session (its id is the context id), so a conversation has
its memory, tool audit and traces like any other. Calls carry an API key
(``Authorization: Bearer``) whose app is the URL's, read-write; the user is
the key's, or for an app-wide key the ``X-User-Id`` header's (a key of the wrong kind gets a JSON-RPC error
saying which kind the call needs: ``wrong_kind_refusal``). Tasks are kept in
PostgreSQL per app and user (one user never sees another's; any web process
answers ``tasks/get``). One turn per session at a time, as on the run API.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from a2a.server.agent_execution import RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.errors import InvalidRequestError
from asgiref.sync import sync_to_async
from google.adk.a2a.executor.a2a_agent_executor import A2aAgentExecutor
from google.adk.a2a.utils.agent_card_builder import AgentCardBuilder
from google.adk.runners import Runner
from starlette.authentication import SimpleUser
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from cognizes.access.callers import USER_HEADER, Refused, authenticate_caller  # noqa: F401  (USER_HEADER: a2a_reference reads it here)
from cognizes.access.outages import Unavailable, as_unavailable
from cognizes.infra.db_threads import run_in_db_thread
from runtime_app import turns
from runtime_app.agents import get_runner, registered_apps
from runtime_app.task_store import PostgresTaskStore
from sessions_app.services import SessionError, check_key
from tools_app.adk import listing_app

PREFIX = "/a2a/"
CARD_PATH = ".well-known/agent-card.json"
SCHEME = "cognizesApiKey"
CAPABILITIES = AgentCapabilities(streaming=True, push_notifications=False, extended_agent_card=False)
SECURITY = {
    SCHEME: SecurityScheme(
        http_auth_security_scheme=HTTPAuthSecurityScheme(
            scheme="Bearer",
            description="A Cognizes API key for this app (read-write), sent as 'Authorization: Bearer <key>'. "
            "A key for the whole app names its user in the X-User-Id header.",
        )
    )
}


def error_body(status: int, message: str, call_id: str | int | None = None) -> dict[str, Any]:
    """JSON-RPC's error shape, with the request's id when it was read (else null)."""
    return {"jsonrpc": "2.0", "id": call_id, "error": {"code": -32600 if status < 500 else -32603, "message": message}}


def refusal(status: int, message: str, call_id: str | int | None = None) -> JSONResponse:
    return JSONResponse(error_body(status, message, call_id), status_code=status)


def call_id_of(call: object) -> str | int | None:
    """The id of a JSON-RPC request (a parsed body), if it has one a response may carry: a string or an integer."""
    found = call.get("id") if isinstance(call, dict) else None
    return found if isinstance(found, str | int) and not isinstance(found, bool) else None


_STREAMING_METHODS = frozenset({"message/stream", "SendStreamingMessage", "tasks/resubscribe", "SubscribeToTask"})
_PERMISSION_DENIED = -31403
"""A2A 1.0's JSON-RPC code for a caller that may not do this (a2a-go reads it as ``ErrUnauthorized``)."""


def wrong_kind_refusal(body: bytes, refused: Refused) -> Response:
    """A refusal for the key's kind as a JSON-RPC error of the call, at 200 as a2a-sdk answers its own errors.

    A2A's clients read no body of a 4xx: a2a-sdk's (so ADK's ``RemoteA2aAgent``) and a2a-go's (ADK for Go's remote
    agents) showed a bare "HTTP Error 400" to a key of the whole app without ``X-User-Id`` (issue 43 item 2). They
    do raise a JSON-RPC error's message, and read a streaming call's answer as a stream: so it goes as one of those.
    Authentication (401) and another app's key (404) stay HTTP answers.
    """
    try:
        call = json.loads(body)
    except (ValueError, RecursionError):
        call = None
    answer = {
        "jsonrpc": "2.0",
        "id": call_id_of(call),
        "error": {"code": _PERMISSION_DENIED if refused.status == 403 else -32600, "message": str(refused)},
    }
    if isinstance(call, dict) and call.get("method") in _STREAMING_METHODS:
        return Response(f"data: {json.dumps(answer)}\n\n", media_type="text/event-stream")
    return JSONResponse(answer)


def outage_refusal(error: Exception) -> JSONResponse | None:
    """The 503, with Retry-After, that ``error`` means when PostgreSQL or Redis is down; None for any other."""
    unavailable = as_unavailable(error)
    if not isinstance(unavailable, Unavailable):
        return None
    response = refusal(503, str(unavailable.detail))
    response.headers["Retry-After"] = str(unavailable.wait)
    return response


class CognizesExecutor(A2aAgentExecutor):
    """ADK's executor on the app's runner, holding the session for the turn like the run API does."""

    def __init__(self, runner: Runner) -> None:
        super().__init__(runner=runner)
        self.app_name = runner.app_name

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        user_id = context.call_context.user.user_name
        assert context.context_id is not None  # the request handler sets it before execute
        try:
            release = await sync_to_async(turns.claim_turn, thread_sensitive=False)(
                self.app_name, user_id, context.context_id
            )
        except turns.SessionBusy as busy:
            raise InvalidRequestError(message=str(busy)) from busy
        try:
            await super().execute(context, event_queue)
        finally:
            await sync_to_async(release, thread_sensitive=False)()


async def build_card(runner: Runner, url: str) -> AgentCard:
    """ADK's card for the runner's agent (skills from its tools, the registry's included), with our auth scheme."""
    token = listing_app.set(runner.app_name)
    try:
        card = await AgentCardBuilder(
            agent=runner.agent,  # type: ignore[arg-type]  # an agent: runner_for builds runners of agents only
            rpc_url=url,
            security_schemes=SECURITY,
        ).build()
    finally:
        listing_app.reset(token)
    card.security_requirements.append(SecurityRequirement(schemes={SCHEME: StringList()}))
    card.capabilities.CopyFrom(CAPABILITIES)
    # The endpoint speaks both versions (A2A 0.3's method names too): with a 0.3 interface
    # listed, the card also carries 0.3's top-level url and protocolVersion, which 0.3 clients require.
    [interface] = card.supported_interfaces
    interface.protocol_version = interface.protocol_version or "1.0"
    card.supported_interfaces.append(
        AgentInterface(url=interface.url, protocol_binding=interface.protocol_binding, protocol_version="0.3")
    )
    for skill in card.skills:
        _make_readable(skill, runner.agent.name)
    return card


def card_json(card: AgentCard) -> dict[str, Any]:
    """The card as JSON (a2a-sdk's, with A2A 0.3's fields), its security requirements' scopes written as lists.

    Protobuf's JSON writes a requirement's scopes (a ``StringList``) as an object,
    ``{"schemes": {"cognizesApiKey": {}}}``; a2a-go (ADK for Go's A2A client) reads
    them only as a list and refuses the whole card otherwise. a2a-sdk reads both,
    so the list is what every client reads.
    """
    out = agent_card_to_dict(card)
    for holder in [out, *out.get("skills", [])]:
        for requirement in holder.get("securityRequirements", []):
            schemes = requirement.get("schemes", {})
            for name, scopes in schemes.items():
                schemes[name] = list(scopes.get("list", [])) if isinstance(scopes, dict) else scopes
    return out


def _make_readable(skill: AgentSkill, agent_name: str) -> None:
    """A skill as a person reads it: ADK names the agent's own skill "model" and describes a tool by its docstring."""
    skill.name = (agent_name if skill.id == agent_name else skill.name).replace("_", " ").strip().capitalize()
    skill.description = " ".join(skill.description.split("\n\n")[0].split())


class AgentServer:
    """One app's A2A endpoints on its runner: a2a-sdk's JSON-RPC dispatch (with the app's tasks) and the card."""

    def __init__(self, runner: Runner, card: AgentCard) -> None:
        self.runner = runner
        self.app_name = runner.app_name
        handler = DefaultRequestHandler(  # the handler reads its card for the capabilities only
            agent_executor=CognizesExecutor(runner),
            task_store=PostgresTaskStore(self.app_name),
            agent_card=card,
        )
        self.dispatcher = JsonRpcDispatcher(request_handler=handler, enable_v0_3_compat=True)

    async def serve_card(self, request: Request) -> Response:
        """The card naming the URL the caller reached; built per request, so registry edits show."""
        card = await build_card(self.runner, _endpoint_url(request, self.app_name))
        return JSONResponse(card_json(card))

    async def serve_rpc(self, request: Request, user_id: str) -> Response:
        """A call of ``user_id``, authenticated already (before the server and its card were made)."""
        invalid = _invalid_ids(await request.body())
        if invalid is not None:
            return invalid
        request.scope["user"] = SimpleUser(user_id)
        return await self.dispatcher.handle_requests(request)


def endpoint_url(base_url: str, app_name: str) -> str:
    """The app's A2A endpoint as reached at ``base_url`` (the server's own, as the caller named it)."""
    return base_url.rstrip("/") + f"{PREFIX}{app_name}/"


def _endpoint_url(request: Request, app_name: str) -> str:
    return endpoint_url(str(request.base_url), app_name)


async def card_of(app_name: str, base_url: str) -> dict[str, Any]:
    """The JSON card ``/a2a/{app}/.well-known/agent-card.json`` serves when reached at ``base_url``.

    For whoever describes the agent elsewhere (the Agent Registry's records embed it), so
    that they show the very card the endpoint serves, never a second rendering of it.
    """
    runner = await sync_to_async(get_runner, thread_sensitive=False)(app_name)
    return card_json(await build_card(runner, endpoint_url(base_url, app_name)))


def _invalid_ids(body: bytes) -> JSONResponse | None:
    """JSON-RPC's invalid-params error for a context or task id PostgreSQL cannot key a session or task by.

    Checked before a2a-sdk sees the call: past that point it would make a task of
    it, and fail to store even the task's failure.
    """
    try:
        call = json.loads(body)
    except (ValueError, RecursionError):
        return None  # a2a-sdk answers the parse error
    params = call.get("params") if isinstance(call, dict) else None
    if not isinstance(params, dict):
        return None
    given = params.get("message")
    message = given if isinstance(given, dict) else {}
    for name, value in [
        *((f"message.{k}", message.get(k)) for k in ("contextId", "context_id", "taskId", "task_id")),
        *((k, params.get(k)) for k in ("id", "taskId", "task_id", "contextId", "context_id")),
    ]:
        if isinstance(value, str):
            try:
                check_key(name, value)
            except SessionError as error:
                return JSONResponse(
                    {"jsonrpc": "2.0", "id": call.get("id"), "error": {"code": -32602, "message": str(error)}}
                )
    return None


def _authenticate(request: Request, app_name: str) -> str:
    """The user this call acts for, after the one scope check (read-write); ``Refused`` otherwise."""
    return authenticate_caller(request.headers, app_name, write=True).user_id


class A2aApplication:
    """The ASGI application under ``/a2a/``: finds the app's server (built on first use) and hands it the call."""

    def __init__(self) -> None:
        self._servers: dict[str, AgentServer] = {}

    async def __call__(
        self, scope: dict[str, Any], receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]
    ) -> None:
        request = Request(scope, receive)
        app_name, _, rest = scope["path"][len(PREFIX) :].partition("/")
        if app_name not in registered_apps() or rest not in ("", CARD_PATH):
            response: Response = refusal(
                404, f"No A2A endpoint at {scope['path']}; agents: " + json.dumps(registered_apps())
            )
        else:
            try:
                response = await self._serve(request, app_name, rest)
            except Refused as refused:
                if refused.wrong_kind:
                    response = wrong_kind_refusal(await request.body(), refused)
                else:
                    response = refusal(refused.status, str(refused))
            except Exception as error:
                if (outage := outage_refusal(error)) is None:
                    raise
                response = outage
        await response(scope, receive, send)

    async def _serve(self, request: Request, app_name: str, rest: str) -> Response:
        if rest == CARD_PATH:
            if request.method not in ("GET", "HEAD"):
                raise Refused(405, "The agent card is read with GET.")
            return await (await self._server(app_name, _endpoint_url(request, app_name))).serve_card(request)
        if request.method != "POST":
            raise Refused(405, "A2A's JSON-RPC endpoint takes POST.")
        user_id = await run_in_db_thread(_authenticate, request, app_name)
        return await (await self._server(app_name, _endpoint_url(request, app_name))).serve_rpc(request, user_id)

    async def _server(self, app_name: str, url: str) -> AgentServer:
        """The app's server, on the runner ``get_runner`` gives (made again when the registry makes a new runner)."""
        runner = await sync_to_async(get_runner, thread_sensitive=False)(app_name)
        server = self._servers.get(app_name)
        if server is None or server.runner is not runner:
            server = self._servers[app_name] = AgentServer(runner, await build_card(runner, url))
        return server

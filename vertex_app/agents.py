"""Deployed agents: ``reasoningEngines/{id}:query`` and ``:streamQuery``, the engine's agent called as Vertex calls one.

An app of ``COGNIZES_AGENTS`` is an engine that hosts its agent: its resource
lists ADK's class methods (``spec.classMethods``), from which Google's SDK
(``client.agent_engines.get`` / ``client.runtimes.get``) builds one method each.
A call names its method as ``classMethod`` (the SDK's spelling) or
``class_method`` (the proto's) and sends its keyword arguments as ``input``;
``runtime_app.deployed`` runs it on the app's Runner. Here: the wire
(``{"output": …}``, one Server-Sent Event per streamed object, errors in Google's
shape, in the stream as ``{"error": {"code", "message"}}``) and the key, which
acts for ``input``'s user as on every surface (a key of one user, only as it;
a read-only key reads but does not run).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

from asgiref.sync import async_to_sync
from google.adk.errors._stale_session_error import StaleSessionError
from google.adk.runners import Runner
from rest_framework.request import Request
from rest_framework.response import Response

from cognizes.access import sse
from cognizes.access.api import check_state_write
from runtime_app import deployed, turns
from runtime_app.agents import UnknownAgent, get_runner
from vertex_app import errors
from vertex_app.base import VertexView
from vertex_app.errors import Aborted, AlreadyExists, FailedPrecondition, GoogleError, InvalidArgument, NotFound
from vertex_app.wire import message

logger = logging.getLogger(__name__)
_BODY = {"class_method": None, "input": None}
STALE = "The session changed while this turn ran (another writer); its events so far are stored."


class _CallView(VertexView):
    streaming = False

    def call(self, request: Request) -> tuple[Runner, deployed.Call]:
        """The engine's Runner and the checked call, the caller's key allowed to make it; else Google's 4xx."""
        try:
            runner = get_runner(self.app_name)
        except UnknownAgent:
            raise FailedPrecondition(f"{self.engine} hosts no agent (COGNIZES_AGENTS).") from None
        body = message(request.data, _BODY)
        try:
            call = deployed.check_call(body.get("class_method"), body.get("input"))
        except deployed.CallError as error:
            raise _google(error) from error
        if call.streams != self.streaming:
            other = ":streamQuery" if call.streams else ":query"
            raise InvalidArgument(f"{call.method} is a {call.api_mode or 'standard'} method: call it with {other}.")
        check_state_write(self.scope(call.user_id, write=call.writes), *deployed.written_state(call))
        return runner, call


class QueryView(_CallView):
    """``{engine}:query``: a class method that answers once (sessions, memory, artifacts)."""

    def post(self, request: Request, **kwargs: Any) -> Response:
        """Call a class method of the engine's agent: {"classMethod", "input"} → {"output"}."""
        runner, call = self.call(request)
        try:
            output = async_to_sync(deployed.query)(runner, call)
        except deployed.CallError as error:
            raise _google(error) from error
        return Response({"output": output})


class StreamQueryView(_CallView):
    """``{engine}:streamQuery?alt=sse``: run the agent for one turn, each event sent as it happens.

    The turn is the run API's: the session is claimed for it (a second turn of
    a busy session is a 409 before anything is stored), and it runs to its end
    even if the client leaves.
    """

    streaming = True

    def post(self, request: Request, **kwargs: Any) -> Any:
        """Stream a class method of the engine's agent (stream_query…): one JSON object per event."""
        runner, call = self.call(request)
        try:
            turn = async_to_sync(deployed.start_turn)(runner, call)
        except deployed.CallError as error:
            raise _google(error) from error
        except turns.SessionBusy as busy:
            raise Aborted(str(busy)) from busy
        return sse.response(_frames(turn))


async def _frames(turn: deployed.Turn) -> AsyncIterator[str]:
    try:
        async for item in deployed.stream(turn):
            yield sse.message(item)
    except StaleSessionError:
        yield sse.message(errors.body(409, STALE, "ABORTED"))
    except Exception as error:
        logger.exception("agent run failed: %s/%s", turn.runner.app_name, turn.arguments["session_id"])
        yield sse.message(errors.body(500, f"The agent failed: {type(error).__name__}: {error}"))


def _google(error: deployed.CallError) -> GoogleError:
    if error.status == 404:
        return NotFound(str(error))
    if error.status == 409:
        return AlreadyExists(str(error))
    return InvalidArgument(str(error))
